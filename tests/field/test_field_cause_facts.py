"""A catalogued cause that is a fact of the node does not stand on words the node's own state
contradicts (issue 20, checks/facts_fit.py): the driver installer's generic hint names nouveau
after every refused nvidia.ko, but nouveau_loaded is the nouveau module in lsmod. Where lsmod
was collected without it, the line's class is the answer; where lsmod lists it, the cause
stands. Lines are real ones from public reports (address beside each)."""

from __future__ import annotations

from typing import Any

import msgspec
from case import Case
from scoreboard import diagnose_case, top_root_cause

from gpunode.checks.facts_fit import fact_signatures
from gpunode.kb import load_kb

# NVIDIA/nvidia-container-toolkit#482 and NVIDIA/gpu-driver-container#44: the installer's
# catch-all after the module built and would not load
REFUSED = ("ERROR: Unable to load the kernel module 'nvidia.ko'.  This happens most frequently when this "
           "kernel module was built against the wrong or improperly configured kernel sources, with a "
           "version of gcc that differs from the one used to build the target kernel, or if another driver, "
           "such as nouveau, is present and prevents the NVIDIA kernel module from obtaining ownership of "
           "the NVIDIA device(s), or no NVIDIA device installed in this system is supported by this NVIDIA "
           "Linux graphics driver release.")
DRIVER_LOG = {"kind": "log", "component": "driver", "container": "nvidia-driver-ctr", "previous": True,
              "text": "Building kernel modules\n  : [##############################] 100%\n" + REFUSED + "\n"}
CRASHING = {"kind": "pod-state", "component": "driver", "state": "CrashLoopBackOff"}
# lsmod on a node whose nouveau holds the GPUs (the format of lsmod(8))
NOUVEAU_LSMOD = {"kind": "node-cmd", "name": "lsmod.txt",
                 "text": "Module                  Size  Used by\nnouveau              2433024  0\n"
                         "mxm_wmi                16384  1 nouveau\ndrm_ttm_helper         16384  1 nouveau\n"
                         "ttm                    98304  2 drm_ttm_helper,nouveau\n"}


def _top(*evidence: dict[str, Any]) -> tuple[str, str] | None:
    raw = {"id": "x-facts", "source": "https://example.org/x", "title": "t", "platform": "generic",
           "evidence": list(evidence), "expect": {"healthy": True}}
    case = msgspec.convert(raw, Case)
    top = top_root_cause(diagnose_case(case), case.node)
    return (top.component, top.cause) if top else None


def test_nouveau_is_a_fact_of_lsmod() -> None:
    names = {m.name for m in fact_signatures(load_kb().get("nouveau_loaded"))}
    assert names == {"lsmod.txt"}
    # a line absent from a log proves nothing: dmesg signatures are no such facts
    assert not fact_signatures(load_kb().get("selinux_blocks_module_load"))


def test_the_installers_hint_without_nouveau_in_lsmod_is_the_lines_class() -> None:
    assert _top(DRIVER_LOG, CRASHING) == ("driver", "error_module_load")


def test_the_installers_hint_with_nouveau_in_lsmod_is_nouveau() -> None:
    assert _top(DRIVER_LOG, CRASHING, NOUVEAU_LSMOD) == ("driver", "nouveau_loaded")


def test_a_module_the_installer_could_not_load_is_the_module_load_class() -> None:
    kb = load_kb()
    assert kb.class_of(REFUSED) == "error_module_load"
    # the installer's progress line is no error of any class
    assert kb.class_of("Loading the kernel module nvidia.ko") is None


def test_lsmod_confirming_nouveau_keeps_the_installers_line_as_the_decisive_one() -> None:
    # lsmod lists nouveau on its second line (after the header): the fact is read line by line,
    # so the driver's own words stay the evidence, not only the lsmod row
    raw = {"id": "x-facts", "source": "https://example.org/x", "title": "t", "platform": "generic",
           "evidence": [DRIVER_LOG, CRASHING, NOUVEAU_LSMOD], "expect": {"healthy": True}}
    case = msgspec.convert(raw, Case)
    top = top_root_cause(diagnose_case(case), case.node)
    assert top is not None and top.decisive is not None
    assert "nvidia-driver-ctr" in top.decisive.source
