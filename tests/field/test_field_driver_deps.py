"""ldd in a GPU container finding no driver library at a driver version that a mounted driver
library needs: the driver's libraries link each other by the full version (libEGL_nvidia needs
libnvidia-eglcore/glsi.so.<version>), a program links them by ABI soname (.so.1), and the host
driver installs them together, so the runtime's injection (the hook's library list, the CDI
spec) left one out: the toolkit, error_not_found (checks.driver_deps). Sources: the Debian
split library directories under a mounted libEGL_nvidia, https://github.com/gazebosim/gz-sim/issues/1272;
the CDI spec omitting libnvidia-eglcore/glcore/glsi/tls on Debian,
https://github.com/NVIDIA/nvidia-container-toolkit/issues/1908; an injected EGL library whose
libnvidia-egl-gbm was not, https://github.com/NVIDIA/nvidia-container-toolkit/issues/264; ldd(1)
for the "=> not found" form. A program's own soname dependency (libnvidia-encode.so.1 without
the video capability, left to the workload's capabilities) and a driver library of another
release than the node's (the image's copy) are not read."""

from __future__ import annotations

from typing import Any

from case import Case, synthetic_case
from scoreboard import top_pair

from gpunode.checks.driver_deps import missing_driver_dependency

NOT_INJECTED = ("container-toolkit", "error_not_found")

#: gazebosim/gz-sim#1272, the reporter's ldd inside the container
LDD = """$ ldd /usr/lib/x86_64-linux-gnu/nvidia/current/libEGL_nvidia.so.0 | grep "not found"
        libnvidia-glsi.so.550.163.01 => not found
        libnvidia-eglcore.so.550.163.01 => not found"""


def _on_driver(text: str, version: str = "550.163.01") -> Case:
    """A GPU job whose log is ``text`` on a node whose driver is ``version``."""
    evidence: list[dict[str, Any]] = [
        {"kind": "workload", "name": "job-0", "namespace": "default", "container": "main",
         "resources": {"limits": {"nvidia.com/gpu": "1"}}, "state": "Running"},
        {"kind": "log", "object": {"kind": "Pod", "name": "job-0", "namespace": "default"},
         "container": "main", "text": text + "\n"}]
    return synthetic_case("x-driver-deps", evidence, cluster={"driver_mode": "host", "gpu_node": {
        "gpus": 1, "driver_version": version}})


def test_a_driver_librarys_missing_dependency_is_the_toolkits_injection() -> None:
    found = missing_driver_dependency(LDD.splitlines(), "550.163.01")
    assert found is not None and "libnvidia-eglcore.so.550.163.01" in found.line
    assert missing_driver_dependency(LDD.splitlines(), None) is not None  # node's release unknown
    assert top_pair(_on_driver(LDD)) == NOT_INJECTED


def test_a_programs_soname_or_another_release_is_not_read() -> None:
    for text in ("\tlibnvidia-encode.so.1 => not found", "\tlibcuda.so.1 => not found",
                 "\tlibfoo.so.3 => not found", "\tlibnvidia-glsi.so.550.163.01 => /usr/lib/x86_64-linux-gnu/"
                 "libnvidia-glsi.so.550.163.01 (0x00007f)"):
        assert missing_driver_dependency([text], "550.163.01") is None, text
    assert missing_driver_dependency(LDD.splitlines(), "535.183.01") is None
    assert missing_driver_dependency(LDD.splitlines(), "570.133.20-ubuntu22.04") is None
    assert top_pair(_on_driver("\tlibnvidia-encode.so.1 => not found")) != NOT_INJECTED
    assert top_pair(_on_driver(LDD, "535.183.01")) != NOT_INJECTED
