"""nvidia-installer's own refusal while nouveau holds the GPU: "ERROR: The Nouveau kernel driver
is currently in use by your system.  This driver is incompatible with the NVIDIA driver, and
must be disabled before proceeding." (its log /var/log/nvidia-installer.log,
NVIDIA/nvidia-installer#3; the runfile's console in pop-os/pop#1307 and
BenedictThompson/Azure-Ethereum-mine#2). Said by a driver container or in the host installer's
log, it is the driver's nouveau_loaded where the node's module list shows nouveau; where the
node's lsmod shows the NVIDIA module loaded and no nouveau, the line is an old run's and the
catalogued cause does not stand on it (checks.facts_fit)."""

from __future__ import annotations

from typing import Any

from case import Case, synthetic_case
from scoreboard import top_pair

from gpunode.explain import explain_lines
from gpunode.kb import load_kb

INSTALLER = ("ERROR: The Nouveau kernel driver is currently in use by your system.  This driver is "
             "incompatible with the NVIDIA driver, and must be disabled before proceeding.\n")
NOUVEAU_LSMOD = ("Module                  Size  Used by\n"
                 "nouveau              2433024  1\n"
                 "drm_ttm_helper         16384  1 nouveau\n")
NVIDIA_LSMOD = ("Module                  Size  Used by\n"
                "nvidia_uvm           4956160  4\n"
                "nvidia              11739136  43 nvidia_uvm\n")
NO_DRIVER = ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that "
             "the latest NVIDIA driver is installed and running.\n")


def _lsmod(text: str) -> dict[str, Any]:
    return {"kind": "node-cmd", "name": "lsmod.txt", "text": text}


def _driver_container(lsmod: str) -> Case:
    evidence = [{"kind": "log", "component": "driver", "container": "nvidia-driver-ctr", "previous": True,
                 "text": "+ export NV_DRIVER=/var/drivers/nvidia/384.111\n" + INSTALLER},
                {"kind": "pod-state", "component": "driver", "container": "nvidia-driver-ctr",
                 "state": "CrashLoopBackOff"},
                _lsmod(lsmod)]
    return synthetic_case("x-nouveau-installer-ctr", evidence, healthy=False)


def _host_installer(lsmod: str, smi: str | None) -> Case:
    evidence = [{"kind": "node-file", "path": "var/log/nvidia-installer.log", "text": INSTALLER},
                _lsmod(lsmod)]
    if smi is not None:
        evidence.append({"kind": "node-cmd", "name": "nvidia-smi.txt", "text": smi})
    return synthetic_case("x-nouveau-installer-host", evidence, healthy=smi is None,
                          cluster={"driver_mode": "host"})


def test_the_driver_container_refused_over_nouveau_is_nouveau_loaded() -> None:
    assert top_pair(_driver_container(NOUVEAU_LSMOD)) == ("driver", "nouveau_loaded")


def test_the_host_installers_log_is_read_the_same_way() -> None:
    assert top_pair(_host_installer(NOUVEAU_LSMOD, NO_DRIVER)) == ("driver", "nouveau_loaded")


def test_an_old_installer_log_on_a_node_with_the_nvidia_module_loaded_stays_healthy() -> None:
    assert top_pair(_host_installer(NVIDIA_LSMOD, None)) is None


def test_the_line_against_an_lsmod_without_nouveau_is_not_that_cause() -> None:
    assert top_pair(_driver_container(NVIDIA_LSMOD)) != ("driver", "nouveau_loaded")


def test_the_installers_line_is_the_catalogued_cause_in_its_own_words() -> None:
    kb = load_kb()
    line = INSTALLER.strip()
    cause = kb.catalogued_in("driver", line)
    assert cause is not None and cause.code == "nouveau_loaded"
    explained = explain_lines([line], kb)
    assert explained.matches and explained.matches[0].cause.code == "nouveau_loaded"


def test_the_installers_own_nouveau_options_are_not_that_line() -> None:
    kb = load_kb()
    for line in ("-> For some distributions, Nouveau can be disabled by adding a file in the modprobe "
                 "configuration directory.",
                 "WARNING: One or more modprobe configuration files to disable Nouveau are already present"):
        cause = kb.catalogued_in("driver", line)
        assert cause is None or cause.code != "nouveau_loaded", line
