"""Container engines other than Docker naming the layer that gives their containers GPUs
(data/job_errors/container_engines.toml): the toolkit's CLI not found by Apptainer's --nvccli,
containerd's ctr and nerdctl --gpus or enroot's NVIDIA hook, LXD's or Incus's missing NVIDIA
container tools, Apptainer's --nv finding none of the driver's libraries, Kata's Rust runtime on
a host booted without the IOMMU. The CLI's own words relayed by
an engine stay read as they are (the toolkit's, or the driver's where they say so), and the
lines a healthy engine prints (enroot's nvidia_uvm warning, Apptainer's INFO lines and its
--contain warning, a Jetson's "no nv files") stay silent.

Sources: apptainer/apptainer internal/pkg/util/gpu/nvidia.go and
internal/pkg/runtime/launch/launcher_linux.go, NVIDIA/enroot conf/hooks/98-nvidia.sh,
canonical/lxd lxd/device/cdi/spec.go, lxc/incus driver_lxc.go, kata-containers
src/runtime-rs/crates/hypervisor/src/device/driver/vfio.rs; lines from containerd/nerdctl#2716
(the GPU Operator's toolkit off the host's PATH), apptainer/apptainer#1208 (--nvccli on XFS),
NVIDIA/pyxis's log relay (common.c), sylabs/singularity#2805 (a Jetson, where the GPU works)."""

from __future__ import annotations

import pytest
from case import Case, gpu_job_case, synthetic_case
from scoreboard import top_pair

from gpunode.job_errors import load_job_errors

TABLE = load_job_errors()

READ = {
    # https://github.com/containerd/nerdctl/issues/2716
    "nerdctl-2716": ('FATA[0000] exec: "nvidia-container-cli": executable file not found in $PATH',
                     ("container-toolkit", "oci_hook_binary_missing")),
    # Apptainer --nvccli on a host without libnvidia-container-tools (nvidia.go, bin.FindBin)
    "apptainer-nvccli": ('FATAL:   container creation failed: exec: "nvidia-container-cli": '
                         "executable file not found in $PATH",
                         ("container-toolkit", "oci_hook_binary_missing")),
    # enroot's hook under pyxis (98-nvidia.sh; pyxis common.c copies enroot's log)
    "pyxis-enroot": ("pyxis: printing enroot log file:\n"
                     "pyxis:     [ERROR] Command not found: nvidia-container-cli, see "
                     "https://github.com/NVIDIA/libnvidia-container\n"
                     "pyxis:     [ERROR] /etc/enroot/hooks.d/98-nvidia.sh exited with return code 1",
                     ("container-toolkit", "oci_hook_binary_missing")),
    # LXD with nvidia.runtime=true (driver_lxc.go) and its CDI GPU device (cdi/spec.go)
    "lxd-tools": ('Error: Failed to start device "gpu": The NVIDIA container tools could not be found',
                  ("container-toolkit", "error_not_found")),
    "lxd-nvidia-ctk": ('Error: Failed preparing container for start: Failed to start device "gpu0": '
                       'Failed finding the nvidia-ctk binary: exec: "nvidia-ctk": executable file not '
                       "found in $PATH", ("container-toolkit", "error_not_found")),
    # Incus's wording of the same (internal/server/instance/drivers/driver_lxc.go)
    "incus-tools": ("Error: Failed to start device \"gpu\": The NVIDIA container tools couldn't be found",
                    ("container-toolkit", "error_not_found")),
    # Kata's Rust runtime binding a GPU to vfio-pci on a host booted without the IOMMU (vfio.rs)
    "kata-iommu": ("Failed to create sandbox: add device: bind device to vfio: iommu isn't set on "
                   "kernel cmdline", ("kernel", "error_config_invalid")),
    # Apptainer's legacy --nv (launcher_linux.go addGPUBinds)
    "apptainer-nv-libs": ("WARNING: Could not find any nv libraries on this host!\n"
                          "FATAL:   while loading the model: CUDA is not available",
                          ("driver", "error_not_found")),
}


def test_engine_words_name_their_layer() -> None:
    for name, (text, want) in READ.items():
        assert top_pair(gpu_job_case(f"engine-{name}", text)) == want, name


def test_relayed_cli_words_keep_their_own_reading() -> None:
    """https://github.com/apptainer/apptainer/issues/1208: the CLI's mount error, relayed by
    Apptainer, is the toolkit's; a relayed 'driver not loaded' is the driver's."""
    xfs = ("INFO:    Setting --writable-tmpfs (required by nvidia-container-cli)\n"
           "FATAL:   container creation failed: nvidia-container-cli failed with exit status 1: "
           "nvidia-container-cli: mount error: file creation failed: /var/apptainer/mnt/session/"
           "final/etc/nvidia/nvidia-application-profiles-rc.d: no data available")
    entry = TABLE.read(xfs.splitlines()[1])
    assert entry is None or entry.id.startswith("container-cli")
    top = top_pair(gpu_job_case("engine-apptainer-1208", xfs))
    assert top is not None and top[0] == "container-toolkit"
    relayed = ("pyxis: printing enroot log file:\n"
               "pyxis:     nvidia-container-cli: initialization error: nvml error: driver not loaded\n"
               "pyxis:     [ERROR] /etc/enroot/hooks.d/98-nvidia.sh exited with return code 1")
    top = top_pair(gpu_job_case("engine-pyxis-driver", relayed))
    assert top is not None and top[0] == "driver"


HEALTHY = [
    # enroot's warning: nvidia_uvm loads on first CUDA use (nvidia-container-cli loads it)
    "[WARN] Kernel module nvidia_uvm is not loaded. Make sure the NVIDIA device driver is "
    "installed and loaded.\nepoch 1 loss 0.31",
    # apptainer/apptainer#1208's working run on ext4
    "INFO:    Setting 'NVIDIA_VISIBLE_DEVICES=all' to emulate legacy GPU binding.\n"
    "INFO:    Setting --writable-tmpfs (required by nvidia-container-cli)\nWaiting for client...",
    # Apptainer's --contain warning (launcher_linux.go setNvCCLIConfig)
    "WARNING: When using nvidia-container-cli with --contain NVIDIA_VISIBLE_DEVICES must be set or "
    "no GPUs will be available in container.\nepoch 1 loss 0.31",
    # https://github.com/sylabs/singularity/issues/2805: a Jetson has no nvidia-smi to bind
    "INFO: Could not find any nv files on this host!\nINFO: The catkin workspace is already initialized.",
    "WARNING: Could not find any 32-bit nv libraries on this host!\nepoch 1 loss 0.31",
    # a guest's own note about an IOMMU for another device
    "INFO iommu is not enabled for vhost-user-blk, skipping\nepoch 1 loss 0.31",
]


def _running(name: str, text: str) -> Case:
    return synthetic_case(f"engine-healthy-{name}", [
        {"kind": "workload", "name": "gpu-job", "namespace": "default", "container": "main",
         "state": "Running"},
        {"kind": "log", "object": {"kind": "Pod", "name": "gpu-job", "namespace": "default"},
         "container": "main", "text": text + "\n"},
    ])


@pytest.mark.parametrize("text", HEALTHY)
def test_healthy_engine_lines_stay_silent(text: str) -> None:
    assert top_pair(_running("x", text)) is None
