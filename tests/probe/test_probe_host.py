"""Host facts read under a fake --host-root, and the bundle the probe writes."""

from __future__ import annotations

import os
from pathlib import Path

import msgspec
import pytest
from fake_host import BOOT_TIME, gpu_node, put
from fake_nvml import FakeGpu, FakeNvml

from gpunode.errors import ParseError
from gpunode.probe import load_probe_json, probe_json, run_probe, write_probe_bundle
from gpunode.probe.hostfs import HostFS


@pytest.fixture
def node_root(tmp_path: Path) -> Path:
    return gpu_node(tmp_path / "host")


def test_driver_modules_devices_and_secure_boot(node_root: Path) -> None:
    host = run_probe(str(node_root), "gpu-wk-01", nvml_lib=FakeNvml([FakeGpu()])).host
    assert host.driver is not None and host.driver.version == "580.159.04"
    assert host.driver.kernel_module_type == "open"
    assert set(host.modules) == {"nvidia", "nvidia_uvm"}
    assert host.device_nodes == ("nvidia-nvswitch0", "nvidia-uvm", "nvidia0", "nvidiactl")
    assert host.secure_boot == "enabled"
    assert host.kernel_release == "5.15.0-119-generic"
    assert host.os_release["VERSION_ID"] == "22.04"
    assert host.processes["nv-fabricmanager"] and host.processes["containerd"]
    assert not host.processes["kubelet"]


def test_kernel_log_from_kmsg_records(node_root: Path) -> None:
    result = run_probe(str(node_root), "gpu-wk-01", nvml_lib=FakeNvml([]))
    log = result.host.kernel_log
    assert log.source == "/dev/kmsg"
    assert [x.xid for x in log.xids] == [63, 48, 154, 119, 79, 154]
    assert log.driver_loaded == "570.133.20"
    assert log.driver_loaded_uptime_s == pytest.approx(5.003561)
    assert result.host.driver_loaded_at == pytest.approx(BOOT_TIME + 5.003561)
    assert result.raw["cmd/dmesg.txt"].splitlines()[5].startswith("[    5.003561] NVRM: loading")


def test_validation_markers_against_driver_load(node_root: Path) -> None:
    markers = {m.name: m for m in run_probe(str(node_root), nvml_lib=FakeNvml([])).host.validations}
    assert markers["toolkit-ready"].older_than_driver_load is True
    assert markers["driver-ready"].older_than_driver_load is False


def test_runtime_cdi_sockets_and_rdma(node_root: Path) -> None:
    host = run_probe(str(node_root), nvml_lib=FakeNvml([])).host
    (config,) = host.runtime_configs
    assert (config.runtime, config.distribution, config.error) == ("containerd", "containerd", None)
    assert config.containerd is not None and "nvidia" in config.containerd.runtimes
    (spec,) = host.cdi_specs  # found through the absolute /var/run -> /run link
    assert (spec.path, spec.kind) == ("/var/run/cdi/nvidia.yaml", "nvidia.com/gpu")
    assert host.device_plugin_sockets == ("nvidia-gpu.sock",)
    assert host.kubelet_registration_socket
    (port,) = host.rdma_ports
    assert (port.device, port.state, port.rate_gbps) == ("mlx5_0", "ACTIVE", 400.0)


def test_absolute_symlinks_stay_inside_the_host_root(tmp_path: Path) -> None:
    root = tmp_path / "host"
    put(root, "run/marker", "inside")
    (root / "var").mkdir()
    os.symlink("/run", root / "var" / "run")
    os.symlink("../../../../../../etc", root / "escape")
    fs = HostFS(str(root))
    assert fs.read("/var/run/marker") == "inside"
    assert fs.resolve("/escape/passwd") == str(root / "etc" / "passwd")


def test_bare_machine_without_gpu(tmp_path: Path) -> None:
    """No driver, no library, no runtime: facts say so and nothing raises."""
    root = tmp_path / "bare"
    put(root, "proc/modules", "ext4 1011712 1 - Live 0xffffffffc0400000\n")
    result = run_probe(str(root), "laptop", kernel_log=False)
    assert result.errors == ()
    assert result.nvml.init_ok is False
    assert result.nvml.init_error in {"library_not_found", "driver_not_loaded"}
    assert (result.host.driver, result.host.driver_error) == (None, "absent")
    assert result.host.modules == {} and result.host.device_nodes == ()
    assert result.host.secure_boot == "not_efi"
    assert result.host.runtime_configs == () and result.host.validations == ()


def test_broken_files_become_errors_not_crashes(node_root: Path) -> None:
    put(node_root, "proc/driver/nvidia/version", "garbage\n")
    put(node_root, "etc/containerd/config.toml", "version = 2\n[plugins\n")
    put(node_root, "run/cdi/broken.json", "{")
    host = run_probe(str(node_root), nvml_lib=FakeNvml([])).host
    assert host.driver is None and host.driver_error and "NVRM version" in host.driver_error
    assert host.runtime_configs[0].error and "invalid TOML" in host.runtime_configs[0].error
    broken = next(s for s in host.cdi_specs if s.path.endswith("broken.json"))
    assert broken.error and broken.kind is None


def test_bundle_layout_and_json_round_trip(node_root: Path, tmp_path: Path) -> None:
    result = run_probe(str(node_root), "gpu-wk-01", nvml_lib=FakeNvml([FakeGpu()]))
    bundle = tmp_path / "bundle"
    write_probe_bundle(result, bundle)
    node = bundle / "nodes" / "gpu-wk-01"
    manifest = msgspec.json.decode((bundle / "manifest.json").read_bytes())
    assert (manifest["format"], manifest["source"]) == ("gpunode-bundle/v1", "probe")
    assert (node / "files/proc/driver/nvidia/version").read_text().startswith("NVRM version")
    assert (node / "files/etc/containerd/conf.d/99-nvidia.toml").is_file()
    assert (node / "files/run/nvidia/validations/driver-ready").read_text() == "IS_HOST_DRIVER=false\n"
    assert "NVRM: Xid" in (node / "cmd/dmesg.txt").read_text()
    assert not (node / "cmd/nvidia-smi-q.xml").exists()  # nvidia-smi was not run
    replayed = load_probe_json((node / "cmd/gpunode-probe.json").read_bytes())
    assert replayed.raw == {}
    assert replayed.nvml == result.nvml and replayed.host == result.host
    assert b'"raw"' not in probe_json(result)


def test_load_probe_json_rejects_other_documents() -> None:
    with pytest.raises(ParseError):
        load_probe_json(b'{"format": "something-else"}')
    with pytest.raises(ParseError):
        load_probe_json(b"not json")


def test_the_kubelet_config_keeps_only_its_cgroup_driver(node_root: Path, tmp_path: Path) -> None:
    """The probe keeps the kubelet config's cgroupDriver line (checks/cgroup_driver.py), not the
    paths and addresses around it; a config without it leaves no file."""
    put(node_root, "var/lib/kubelet/config.yaml",
        "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
        "authentication:\n  x509:\n    clientCAFile: /etc/kubernetes/pki/ca.crt\ncgroupDriver: systemd\n")
    bundle = tmp_path / "bundle"
    write_probe_bundle(run_probe(str(node_root), "gpu-wk-01", nvml_lib=FakeNvml([FakeGpu()])), bundle)
    kept = bundle / "nodes/gpu-wk-01/files/var/lib/kubelet/config.yaml"
    assert kept.read_text() == "cgroupDriver: systemd\n"
    put(node_root, "var/lib/kubelet/config.yaml", "kind: KubeletConfiguration\n")
    again = tmp_path / "again"
    write_probe_bundle(run_probe(str(node_root), "gpu-wk-01", nvml_lib=FakeNvml([FakeGpu()])), again)
    assert not (again / "nodes/gpu-wk-01/files/var/lib/kubelet/config.yaml").exists()


def test_the_newest_runsc_boot_logs_are_kept(node_root: Path, tmp_path: Path) -> None:
    """runsc writes a debug log a command (runsc.toml ``debug-log = "/var/log/runsc/"``): the
    probe keeps the newest boot logs, where nvproxy's refusals are (checks/runsc_log.py), and
    no other command's."""
    for stamp in range(6):
        put(node_root, f"var/log/runsc/runsc.log.20240710-21043{stamp}.000000.boot.txt", f"boot {stamp}\n")
    put(node_root, "var/log/runsc/runsc.log.20240710-210439.000000.gofer.txt", "gofer\n")
    bundle = tmp_path / "bundle"
    write_probe_bundle(run_probe(str(node_root), "gpu-wk-01", nvml_lib=FakeNvml([FakeGpu()])), bundle)
    kept = sorted(p.name for p in (bundle / "nodes/gpu-wk-01/files/var/log/runsc").iterdir())
    assert kept == [f"runsc.log.20240710-21043{stamp}.000000.boot.txt" for stamp in range(2, 6)]


def test_dkms_make_logs_of_the_newest_driver_versions_are_kept(node_root: Path, tmp_path: Path) -> None:
    """DKMS builds the NVIDIA module in /var/lib/dkms/nvidia/<version>/build and names its
    make.log when the build fails: the probe keeps the newest versions' logs, not the
    ``kernel-<release>-<arch>`` links DKMS keeps beside them, nor another module's."""
    for version in ("470.256.02", "535.183.01", "550.54.14"):
        put(node_root, f"var/lib/dkms/nvidia/{version}/build/make.log",
            f"DKMS make.log for nvidia-{version}\n")
    put(node_root, "var/lib/dkms/nvidia/kernel-5.15.0-119-generic-x86_64/build/make.log", "link\n")
    put(node_root, "var/lib/dkms/zfs/2.1.5/build/make.log", "zfs\n")
    bundle = tmp_path / "bundle"
    write_probe_bundle(run_probe(str(node_root), "gpu-wk-01", nvml_lib=FakeNvml([FakeGpu()])), bundle)
    kept = sorted(p.parent.parent.name for p in
                  (bundle / "nodes/gpu-wk-01/files/var/lib/dkms").rglob("make.log"))
    assert kept == ["535.183.01", "550.54.14"]


def test_the_driver_s_other_dkms_names_and_portage_s_log_are_kept(node_root: Path, tmp_path: Path) -> None:
    """The open modules' DKMS name (nvidia-open) and Gentoo's nvidia-drivers build log are the
    driver's too; GPUDirect Storage's DKMS module (nvidia-fs) and other packages are not."""
    put(node_root, "var/lib/dkms/nvidia-open/570.124.06/build/make.log", "open\n")
    put(node_root, "var/lib/dkms/nvidia-fs/2.20.5/build/make.log", "gds\n")
    put(node_root, "var/tmp/portage/x11-drivers/nvidia-drivers-304.135/temp/build.log", "gentoo\n")
    put(node_root, "var/tmp/portage/x11-drivers/xf86-video-nouveau-1.0.17/temp/build.log", "other\n")
    bundle = tmp_path / "bundle"
    write_probe_bundle(run_probe(str(node_root), "gpu-wk-01", nvml_lib=FakeNvml([FakeGpu()])), bundle)
    files = bundle / "nodes/gpu-wk-01/files"
    kept = sorted(str(p.relative_to(files)) for p in files.rglob("*.log")
                  if "lib/dkms" in str(p) or "portage" in str(p))
    assert kept == ["var/lib/dkms/nvidia-open/570.124.06/build/make.log",
                    "var/tmp/portage/x11-drivers/nvidia-drivers-304.135/temp/build.log"]


def test_syslog_lines_naming_the_gpu_driver_are_kept_and_no_others(node_root: Path, tmp_path: Path) -> None:
    """A host driver installed by configuration management logs to syslog: the probe keeps
    the lines that name the GPU or its driver, not the rest of the host's log."""
    put(node_root, "var/log/messages",
        "Feb  4 11:43:40 gpu-node2 sshd[901]: Accepted publickey for centos from 10.0.0.7\n"
        "Feb  4 11:43:46 gpu-node2 puppet-agent[1074]: (/Stage[main]/Profile::Gpu::Install::Vgpu/"
        "Package[arbutus-cloud-vgpu-repo]/ensure) change from 'absent' to 'present' failed\n"
        "Feb  4 11:43:47 gpu-node2 systemd[1]: Started Session 3 of user centos.\n")
    bundle = tmp_path / "bundle"
    write_probe_bundle(run_probe(str(node_root), "gpu-wk-01", nvml_lib=FakeNvml([FakeGpu()])), bundle)
    kept = (bundle / "nodes/gpu-wk-01/files/var/log/messages").read_text(encoding="utf-8")
    assert kept.splitlines() == [
        "Feb  4 11:43:46 gpu-node2 puppet-agent[1074]: (/Stage[main]/Profile::Gpu::Install::Vgpu/"
        "Package[arbutus-cloud-vgpu-repo]/ensure) change from 'absent' to 'present' failed"]
    assert not (bundle / "nodes/gpu-wk-01/files/var/log/syslog").exists()
