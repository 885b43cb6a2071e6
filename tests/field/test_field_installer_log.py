"""The host driver installer's log names why the driver's kernel module is missing: DKMS
could not build it for the node's kernel (driver_kernel_incompatible). The probe keeps the
log's tail (``files/var/log/nvidia-installer.log``); a node whose driver serves its GPUs is
not blamed for an old run's log."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from case import Case
from scoreboard import top_pair

from gpunode.kb import load_kb
from gpunode.probe.host import INSTALLER_LOG, LOG_TAILS


def _case(*evidence: dict[str, Any]) -> Case:
    raw = {"id": "x-installer-log", "source": "https://example.org/x", "title": "t", "platform": "generic",
           "evidence": list(evidence), "expect": {"healthy": False}}
    return msgspec.convert(raw, Case)


def _log(text: str) -> dict[str, Any]:
    return {"kind": "node-file", "path": "var/log/nvidia-installer.log", "text": text}


_NO_DRIVER = {"kind": "node-cmd", "name": "nvidia-smi.txt",
              "text": "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
                      "Make sure that the latest NVIDIA driver is installed and running.\n"}

#: microsoft/pai#3413: driver 410.73 on kernel 4.4.0-62 (the installer quotes the command with '').
PAI = ("ERROR: Failed to run '/usr/sbin/dkms build -m nvidia -v 410.73 -k 4.4.0-62-generic':\n"
       "            Kernel preparation unnecessary for this kernel.   Skipping...\n"
       "            'make' -j32 NV_EXCLUDE_BUILD_MODULES=''\n"
       "            KERNEL_UNAME=4.4.0-62-generic  IGNORE_CC_MISMATCH=''\n"
       "            modules......(bad exit status: 2)\n"
       "ERROR: Failed to install the kernel module through DKMS.  No kernel module was installed; please\n")
#: clearlinux/distribution#1133: driver 390.87 on kernel 5.2.9-825.native (backquoted, /usr/bin/dkms).
CLEAR = ("ERROR: Failed to run `/usr/bin/dkms build -m nvidia -v 390.87 -k\n"
         "       5.2.9-825.native`: \n"
         "       Kernel preparation unnecessary for this kernel.  Skipping...\n"
         "       modules............(bad exit status: 2)\n"
         "ERROR: Failed to install the kernel module through DKMS. No kernel module was\n")


def _pasted(line: str) -> set[str]:
    """The causes whose pasted-text signatures match ``line`` (what ``gpunode explain`` reads)."""
    return {c.code for c in load_kb().causes for m in c.match if m.source == "text" and m.regex.search(line)}


def test_the_probe_keeps_the_installer_log() -> None:
    assert INSTALLER_LOG in LOG_TAILS


@pytest.mark.parametrize("text", [PAI, CLEAR])
def test_a_driver_module_dkms_could_not_build_is_the_kernel_incompatibility(text: str) -> None:
    assert top_pair(_case(_log(text), _NO_DRIVER)) == ("driver", "driver_kernel_incompatible")


def test_dkms_autoinstall_failing_for_the_driver_is_read_in_pasted_text() -> None:
    # NVIDIA/open-gpu-kernel-modules#635 (Fedora 40, kernel 6.8.10)
    line = "dkms autoinstall on 6.8.10-300.fc40.x86_64/x86_64 failed for nvidia(10)"
    assert _pasted(line) == {"driver_kernel_incompatible"}


def test_another_module_s_dkms_failure_is_not_the_driver_s() -> None:
    # look-alike, xanmod/linux#46: DKMS's own line names no module, bbswitch's build failed.
    for line in ("Error! Bad return status for module build on kernel: 5.6.2-xanmod1-1-xanmod (x86_64)",
                 "==> dkms install bbswitch/0.8 -k 5.6.2-xanmod1-1-xanmod"):
        assert "driver_kernel_incompatible" not in _pasted(line)


def test_an_old_failed_run_on_a_node_whose_driver_serves_its_gpus_is_healthy() -> None:
    # look-alike: the same log where the driver loaded since (nvidia-smi answers): not a verdict.
    assert top_pair(_case(_log(PAI))) is None


#: mesosphere/konvoy-image-builder#1200: driver 470.199.02 on the 5.15.0-1070-aws kernel.
KONVOY = ("ERROR: An error occurred while performing the step: \"Checking to see whether the nvidia kernel "
          "module was successfully built\". See /var/log/nvidia-installer.log for details.\n"
          "warning: the compiler differs from the one used to build the kernel\n"
          "ERROR: modpost: GPL-incompatible module nvidia.ko uses GPL-only symbol 'rcu_read_unlock_strict'\n")


def test_modpost_refusing_the_driver_module_in_the_installer_log_is_the_kernel_incompatibility() -> None:
    assert top_pair(_case(_log(KONVOY), _NO_DRIVER)) == ("driver", "driver_kernel_incompatible")


def test_modpost_s_refusal_in_an_old_run_on_a_serving_driver_is_healthy() -> None:
    # look-alike: the driver loaded since (nvidia-smi answers)
    assert top_pair(_case(_log(KONVOY))) is None


#: DKMS stopping before the build because the running kernel's headers are not installed
#: (CentOS 7, driver 375.26; dkms's prepare_kernel words, after older releases' "Error! echo").
DKMS_NO_HEADERS = (
    "ERROR: Failed to run `/usr/sbin/dkms build -m nvidia -v 375.26 -k 3.10.0-327.28.3.el7.x86_64`: "
    "Error! echo\n"
    "Your kernel headers for kernel 3.10.0-327.28.3.el7.x86_64 cannot be found at\n"
    "/lib/modules/3.10.0-327.28.3.el7.x86_64/build or /lib/modules/3.10.0-327.28.3.el7.x86_64/source\n")


def test_dkms_finding_no_headers_for_the_running_kernel_is_the_missing_headers() -> None:
    assert top_pair(_case(_log(DKMS_NO_HEADERS), _NO_DRIVER)) == ("driver", "kernel_headers_missing")
    assert _pasted("Error! Your kernel headers for kernel 6.8.0-60-generic cannot be found at") == {
        "kernel_headers_missing"}


def test_dkms_s_headers_stop_in_an_old_run_on_a_serving_driver_is_healthy() -> None:
    # look-alike: the headers were installed and the driver built since (nvidia-smi answers)
    assert top_pair(_case(_log(DKMS_NO_HEADERS))) is None
    # and DKMS's progress through a kernel whose headers are there names nothing
    assert _pasted("Kernel preparation unnecessary for this kernel.  Skipping...") == set()
