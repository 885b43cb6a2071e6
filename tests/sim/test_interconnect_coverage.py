"""Issue 26's done-when: ``gpunode causes`` lists at least 15 fabric and interconnect causes and
each has a simulator scenario. The scenario's diagnosis is checked where every fault's is
(tests/core/test_diagnose_scenarios.py: exactly its cause offline; tests/live/test_one_verdict.py:
the same live and in validate); this fails as soon as a link cause has no scenario at all."""

from __future__ import annotations

import json

from gpunode.kb import load_kb
from gpunode.sim import FAULTS, list_scenarios, load_scenario
from inprocess import run_cli

#: The catalog's components of the links (NVLink and its fabric, Fabric Manager, IMEX,
#: InfiniBand/RoCE ports, the GPUDirect RDMA path): every cause of theirs is an interconnect cause.
LINK_COMPONENTS = frozenset({"nvlink-fabric", "fabric-manager", "imex", "rdma-links", "gpudirect-rdma"})
#: Interconnect causes judged on the driver, which ships both pieces: the module between GPU
#: and HCA, and the Fabric Manager of the driver's own version.
ON_THE_DRIVER = frozenset({"peermem_not_loaded", "fabric_manager_version_mismatch"})


def interconnect_causes() -> list[str]:
    causes = load_kb().causes
    return sorted(c.code for c in causes if c.component in LINK_COMPONENTS or c.code in ON_THE_DRIVER)


def test_causes_lists_at_least_fifteen_interconnect_causes() -> None:
    done = run_cli("causes", "-o", "json")  # the command line, in this process
    assert done.returncode == 0, done.stderr
    listed = {c["code"]: c["component"] for c in json.loads(done.stdout)}
    assert {code for code, component in listed.items() if component == "driver"} >= ON_THE_DRIVER
    assert sorted(code for code, component in listed.items()
                  if component in LINK_COMPONENTS or code in ON_THE_DRIVER) == interconnect_causes()
    assert len(interconnect_causes()) >= 15


def test_every_interconnect_cause_has_a_fault_scenario() -> None:
    scenarios = {name for name, _ in list_scenarios()}
    kb = load_kb()
    missing = [code for code in interconnect_causes()
               if code not in FAULTS or "fault-" + code.replace("_", "-") not in scenarios]
    assert not missing, f"interconnect causes without a simulator scenario: {missing}"
    for code in interconnect_causes():
        assert FAULTS[code].component == kb.get(code).component, code
        assert [f.type for f in load_scenario("fault-" + code.replace("_", "-")).faults] == [code]
