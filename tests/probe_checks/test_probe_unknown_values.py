"""Skipped is unknown: a probe value gpunode does not recognise never becomes a verdict.

The probe checks read anything but the values they know as a failure (a recovery action
other than None, a fabric state other than Completed, an MIG mode that differs, a port
state other than active). A value outside the probe's own vocabulary (a newer driver's
recovery action ``8``, written by the probe as the number it could not name; a state from a
newer probe; a negative count) makes the component ``unknown`` with the value named
(gpunode.doubt), while the same checks still fail on the values they know, and a real
problem elsewhere in the same probe still stands.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from probe_check_helpers import (
    Facts,
    add_gpus,
    component,
    gpu,
    judge,
    node_object,
    recorded,
    root_causes,
    write_bundle,
)
from test_probe_checks_gpus import _hgx
from test_probe_checks_host import _rdma

from gpunode import doubt
from gpunode.bundle.load import load_bundle, read_node_observations
from gpunode.model import Status
from gpunode.probe import nvml
from gpunode.validate.runner import validate_facts

Change = Callable[[Path, Facts], None]


def _recovery(value: str) -> Change:
    return lambda _tmp, facts: gpu(facts).update(recovery_action=value)


def _fabric(state: str, status: str | None = None) -> Change:
    def change(_tmp: Path, facts: Facts) -> None:
        _hgx(facts, "Completed", fm_running=True)
        gpu(facts, 3).update(fabric_state=state, fabric_status=status)
    return change


def _mig(current: str, pending: str) -> Change:
    return lambda _tmp, facts: gpu(facts).update(mig_mode_current=current, mig_mode_pending=pending)


def _init_error(error: str) -> Change:
    def change(_tmp: Path, facts: Facts) -> None:
        facts["nvml"].update(init_ok=False, init_error=error, init_error_message="?", device_count=None,
                             gpus=[])
    return change


def _port(state: str) -> Change:
    return lambda tmp, facts: _rdma(tmp, facts, [("4: ACTIVE", "5: LinkUp"), (state, "5: LinkUp")])


def _value(**values: Any) -> Change:
    return lambda _tmp, facts: gpu(facts).update(**values)


def _count(count: int) -> Change:
    return lambda _tmp, facts: facts["nvml"].update(device_count=count)


@dataclass(frozen=True)
class Case:
    id: str
    change: Change
    #: the component, and the words its unknown summary holds
    component: str
    said: str
    #: the same field with a value the probe checks know, and the cause it still gives
    known: Change
    cause: str


CASES = [
    Case("recovery-action-newer-driver", _recovery("8"), "gpu-hardware", "GPU 0 recovery action '8'",
         _recovery("GPU Reset Required"), "xid_154_recovery_action"),
    Case("fabric-state-unknown", _fabric("Degraded Bandwidth"), "fabric-manager",
         "GPU 3 fabric state 'Degraded Bandwidth'", _fabric("In Progress"), "fabric_manager_not_running"),
    Case("fabric-status-unknown", _fabric("Completed", "Rebalancing"), "fabric-manager",
         "GPU 3 fabric status 'Rebalancing'", _fabric("Completed", "timeout"), "fabric_registration_failed"),
    Case("mig-mode-unknown", _mig("Enabled", "Reset Pending"), "gpu-hardware",
         "GPU 0 pending MIG mode 'Reset Pending'", _mig("Disabled", "Enabled"), "mig_mode_change_pending"),
    Case("init-error-not-nvml", _init_error("AttributeError"), "driver", "NVML init error 'AttributeError'",
         _init_error("unknown"), "nvidia_smi_failed"),
    Case("port-state-unknown", _port("7: TESTING"), "rdma-links", "RDMA port mlx5_1/1 state '7: TESTING'",
         _port("1: DOWN"), "rdma_port_down"),
    Case("negative-ecc-count", _value(ecc_volatile_dbe=-1), "gpu-hardware",
         "GPU 0 uncorrectable ECC count -1", _value(ecc_volatile_dbe=2), "uncorrectable_ecc"),
    Case("no-slowdown-temperature", _value(slowdown_temp_c=0), "gpu-hardware",
         "GPU 0 slowdown temperature 0", _value(temperature_c=95), "gpu_thermal_slowdown"),
    Case("negative-gpu-count", _count(-1), "gpu-hardware", "NVML GPU count -1", _count(0), "gpu_missing"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_an_unknown_probe_value_is_unknown_not_a_failure(case: Case, tmp_path: Path) -> None:
    facts = recorded()
    case.change(tmp_path / "unknown", facts)
    report = judge(tmp_path / "unknown", facts, node=node_object())
    judged = component(report, case.component)
    assert judged.status == Status.UNKNOWN, judged
    summary = judged.summary
    assert summary.startswith(f"gpunode probe: {case.said} is not a value gpunode knows"), summary
    assert summary.endswith("what it means is unknown")
    assert (case.component, case.cause) not in root_causes(report)
    assert all(c.status not in (Status.FAILED, Status.DEGRADED) for c in report.components), \
        [(c.component, c.status) for c in report.components]
    facts = recorded()
    case.known(tmp_path / "known", facts)
    assert (case.component, case.cause) in root_causes(judge(tmp_path / "known", facts, node=node_object()))


def test_a_real_problem_in_the_same_probe_stands(tmp_path: Path) -> None:
    """GPU 0's recovery action is unknown, GPU 1 has uncorrectable ECC errors: still failed."""
    facts = recorded()
    add_gpus(facts, 2)
    gpu(facts, 0)["recovery_action"] = "8"
    gpu(facts, 1)["ecc_volatile_dbe"] = 4
    report = judge(tmp_path, facts, node=node_object(gpus=2))
    assert root_causes(report) == [("gpu-hardware", "uncorrectable_ecc")]
    assert component(report, "gpu-hardware").status == Status.FAILED


def test_validate_does_not_fail_on_an_unknown_port_state(tmp_path: Path) -> None:
    """validate reads the probe's RDMA ports too: a port state it does not know is unknown there."""
    facts = recorded()
    _port("7: TESTING")(tmp_path, facts)
    bundle = write_bundle(tmp_path, facts, node=node_object())
    report = validate_facts(load_bundle(bundle), read_node_observations, categories=("network",))
    check = next(c for c in report.checks() if c.id == "network.rdma-ports")
    assert check.verdict.value == "unknown", check.summary
    assert check.summary.startswith("h200-device: not judged: gpunode probe: RDMA port mlx5_1/1 state "
                                    "'7: TESTING'"), check.summary
    facts = recorded()
    _port("1: DOWN")(tmp_path / "down", facts)
    bundle = write_bundle(tmp_path / "down", facts, node=node_object())
    report = validate_facts(load_bundle(bundle), read_node_observations, categories=("network",))
    assert next(c for c in report.checks() if c.id == "network.rdma-ports").verdict.value == "fail"


def test_the_vocabulary_is_the_probes_own() -> None:
    """What gpunode.doubt knows is everything this probe writes (it names what it can)."""
    assert set(nvml._RECOVERY_ACTIONS.values()) == doubt.RECOVERY_ACTIONS
    assert set(nvml._FABRIC_STATES.values()) == doubt.FABRIC_STATES
    assert {"Enabled", "Disabled"} == doubt.MIG_MODES
