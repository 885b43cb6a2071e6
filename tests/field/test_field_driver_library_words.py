"""A library the NVIDIA driver delivers, named with a failure to load it, in any program's words
(src/gpunode/data/job_errors/driver_libraries.toml): every failure verb (cannot/can't/couldn't/
could not/failed to/unable to + load/open/find/dlopen/locate, the loader's "cannot open shared
object file", "not found", ldconfig's "is empty, not checked") with every driver library of
libnvidia-container's lists (https://github.com/NVIDIA/libnvidia-container/blob/master/src/nvc_info.c;
the toolkit's discovery, https://github.com/NVIDIA/nvidia-container-toolkit/blob/main/internal/discover/symlinks.go)
of the compute and utility capabilities (those every served container gets) names the container
toolkit, the layer that should have delivered it; the other capabilities' libraries (video,
graphics) stay the workload's request. Programs' forms:
FFmpeg's dynlink loader (https://github.com/FFmpeg/nv-codec-headers, "Cannot load %s";
chrisbenincasa/tunarr#475), TensorFlow's dso_loader (codalab/codalab-worksheets#324), DALI's
VideoReader (NVIDIA/DALI#2362), ldconfig (microsoft/WSL#8274). The node's facts settle the cause
as for the loader's words; the CUDA toolkit's libraries, a stub libcuda and a pod that holds no
GPU stay silent."""

from __future__ import annotations

from typing import Any

from case import Case, running_job_case, synthetic_case
from scoreboard import top_pair

from gpunode.job_errors import load_job_errors

TABLE = load_job_errors()

#: Lines naming a compute or utility library (the runtime's default capabilities).
DEFAULT = [
    "[h264_nvenc @ 0x3252b80] Cannot load libcuda.so.1",
    "[AVHWDeviceContext @ 0x55d0] Cannot load libcuda.so.1",
    "I tensorflow/stream_executor/dso_loader.cc:99] Couldn't open CUDA library libcuda.so.1. "
    "LD_LIBRARY_PATH:",
    "W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library "
    "'libcuda.so.1'; dlerror: libcuda.so.1: cannot open shared object file: No such file or directory",
    "OSError: libnvidia-ml.so.1: cannot open shared object file: No such file or directory",
    "failed to dlopen libcuda.so.1",
    "Unable to load libnvidia-ptxjitcompiler.so.1",
    "error: unable to find libnvidia-opencl.so.1",
    "libnvidia-ml.so.1 not found",
    "\tlibcuda.so.1 => not found",
]
#: Lines naming a library of another capability (video, graphics, ngx): mounted only for a container
#: that asks for it, so not read (docker-plex-340, vsgan-tensorrt-docker-42: the workload's request).
CAPABILITY = [
    "Cannot load libnvcuvid.so.1",
    "Cannot load libnvidia-encode.so.1",
    "[/opt/dali/dali/operators/reader/loader/video_loader.h:182] Assert on \"lib_handle_\" failed: "
    "Failed to load libnvcuvid.so, needed by the VideoReader operator.",
    "Failed to load libnvidia-opticalflow.so",
    "OptiX error: could not find libnvoptix.so.1",
    "libEGL_nvidia.so.0: cannot open shared object file: No such file or directory",
    "Could not open libGLX_nvidia.so.0",
]
#: Lines that name no driver library failing to load: the CUDA toolkit's libraries (the image's),
#: TensorFlow's diagnostics after a stub libcuda was loaded, a successful open, the toolkit's own
#: library, a driver library at a full driver version (checks.driver_deps), an L4T placeholder.
SILENT = [
    "/bin/bash: error while loading shared libraries: libcudart.so.10.1: cannot open shared object file",
    "I tensorflow/stream_executor/dso_loader.cc:99] Couldn't open CUDA library libcudnn.so. "
    "LD_LIBRARY_PATH:",
    "Could not load dynamic library 'libcublas.so.11'; dlerror: libcublas.so.11: "
    "cannot open shared object file",
    "I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:189] libcuda reported version is: Not found: "
    "was unable to find libcuda.so DSO loaded into this program",
    "I tensorflow/stream_executor/dso_loader.cc:105] successfully opened CUDA library libcuda.so.1 locally",
    "Cannot load libcuda_stub.so",
    "nvidia-container-cli: error while loading shared libraries: libnvidia-container.so.1: cannot open",
    "/sbin/ldconfig.real: File /usr/lib/aarch64-linux-gnu/tegra/libcuda.so.1 is empty, not checked.",
    "/sbin/ldconfig.real: File /usr/local/cuda/lib64/libcudnn.so.8 is empty, not checked.",
]


def test_every_failure_verb_with_every_driver_library_is_read() -> None:
    for line in DEFAULT:
        found = TABLE.read(line)
        assert found is not None and found.component == "container-toolkit", line
        assert found.cause == "container_cli_no_driver_libs", (line, found.id)
    empty = TABLE.read("/sbin/ldconfig.real: File /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1 "
                       "is empty, not checked.")
    assert empty is not None and empty.cause == "container_image_ships_driver_files"


def test_other_libraries_and_a_loaded_stub_are_not_read() -> None:
    for line in SILENT + CAPABILITY:
        found = TABLE.read(line)
        assert found is None or found.component != "container-toolkit", (line, found.id)


def _docker_job(text: str, resources: dict[str, Any] | None = None) -> Case:
    """A running job on a Docker node with a host driver, as the field cases place such reports."""
    workload: dict[str, Any] = {"kind": "workload", "name": "job-0", "namespace": "default",
                                "container": "job", "state": "Running"}
    if resources is not None:
        workload["resources"] = resources
    return synthetic_case("x-driver-library-words", [
        workload,
        {"kind": "log", "object": {"kind": "Pod", "name": "job-0", "namespace": "default"},
         "container": "job", "text": text + "\n"}],
        platform="docker", cluster={"driver_mode": "host", "gpu_node": {"gpus": 1}})


def test_ffmpeg_cannot_load_libcuda_is_the_runtime_not_served() -> None:
    """chrisbenincasa/tunarr#475: settled by the node's facts as the loader's own words are."""
    assert top_pair(_docker_job("[h264_nvenc @ 0x3252b80] Cannot load libcuda.so.1")) == \
        ("container-toolkit", "nvidia_not_default_runtime")


def test_a_video_library_not_loaded_stays_the_workloads_request() -> None:
    """The NVIDIA runtime mounts libnvidia-encode only for a container that asks for video."""
    assert top_pair(_docker_job("[hevc_nvenc @ 0x55ca] Cannot load libnvidia-encode.so.1")) is None


def test_empty_driver_libraries_in_the_image() -> None:
    """microsoft/WSL#8274: an image committed from a served container carries empty driver files."""
    line = "/sbin/ldconfig.real: File /usr/lib/x86_64-linux-gnu/libcuda.so.1 is empty, not checked."
    case = running_job_case("x-ldconfig-empty", line, cluster={"driver_mode": "host"})
    assert top_pair(case) == ("container-toolkit", "container_image_ships_driver_files")


def test_healthy_look_alikes_stay_healthy() -> None:
    """A pod that holds no GPU (zoriya/Kyoo#647), the CUDA toolkit's own libraries missing from the
    image, TensorFlow's diagnostics after it loaded a stub libcuda (tensorflow/tensorflow#14224)."""
    no_gpu = _docker_job("[AVHWDeviceContext @ 0x5916] Cannot load libcuda.so.1", {"limits": {}})
    assert top_pair(no_gpu) is None
    for line in SILENT[:4]:
        assert top_pair(_docker_job(line)) is None, line


def test_the_drivers_x_module_not_found_is_the_drivers() -> None:
    """Xorg's loader (xserver hw/xfree86/loader/loadmod.c) finding no nvidia module on its
    ModulePath: the driver's install left its X component out (selkies-project/selkies-vdi#4)."""
    for line in ("[  1372.709] (WW) Warning, couldn't open module nvidia",
                 '[    45.012] (EE) Failed to load module "nvidia" (module does not exist, 0)',
                 "(WW) Warning, couldn't open module glxserver_nvidia"):
        found = TABLE.read(line)
        assert found is not None and (found.component, found.cause) == ("driver", "error_not_found"), line
    for line in ("(WW) Warning, couldn't open module fbdev",
                 "(WW) Warning, couldn't open module nvidia-drm-x",
                 '(EE) Failed to load module "nvidia" (already loaded, 0)'):
        found = TABLE.read(line)
        assert found is None or found.component != "driver", line


def _runtime_journal(text: str) -> Case:
    journal = {"kind": "node-cmd", "name": "journal-runtime.txt", "text": text + "\n"}
    return synthetic_case("x-host-nvml", [journal], platform="docker", cluster={"driver_mode": "host"})


def test_a_host_daemon_that_cannot_load_nvml_names_the_drivers_library() -> None:
    """The Go NVML bindings' "could not load NVML library" (NVML_ERROR_LIBRARY_NOT_FOUND, a failed
    dlopen of libnvidia-ml from the host's loader path) in the node's own journal: the host's
    libnvidia-ml is not in its ld cache (NVIDIA/nvidia-docker#470, #74)."""
    line = "nvidia-docker-plugin | 2017/09/18 16:29:20 Error: could not load NVML library"
    assert top_pair(_runtime_journal(line)) == ("driver", "nvml_library_missing")


def test_the_toolkit_clis_own_library_failure_stays_the_toolkits() -> None:
    """nvidia-container-cli searches its configured driver root: its "load library failed" is the
    toolkit's (container_cli_no_driver_libs), and a healthy journal line about NVML says nothing."""
    line = ('dockerd[812]: time="2024-01-02T03:04:05Z" level=error msg="Handler for POST /containers/create '
            'returned error: nvidia-container-cli: initialization error: load library failed: '
            'libnvidia-ml.so.1: cannot open shared object file: no such file or directory: unknown"')
    assert top_pair(_runtime_journal(line)) != ("driver", "nvml_library_missing")
    quiet = "nvidia-docker-plugin | 2017/09/18 16:29:20 Loading NVIDIA management library"
    assert top_pair(_runtime_journal(quiet)) is None
