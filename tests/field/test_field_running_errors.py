"""A running node component whose own log ends in an error it did not recover from is
degraded with that line (issue 20): the MIG manager's apply that failed, a plugin that
found no device to serve, an exporter's collector that fails on every scrape. The same
components stay healthy when a later line shows the error was transient, or when the
error is about the host outside the stack (a network interface attribute the kernel does
not serve, a device class the host has none of)."""

from __future__ import annotations

import msgspec
from case import CASES_DIR, Case, Expect, LogEv, NodeLabelsEv, load_case
from scoreboard import top_pair

from gpunode.kb import load_kb


def _case(name: str) -> Case:
    return load_case(CASES_DIR / f"{name}.yaml")


def _append(case: Case, text: str) -> Case:
    """The case with ``text`` appended to its logs and no other evidence of failure."""
    evidence = tuple(msgspec.structs.replace(e, text=e.text + text) if isinstance(e, LogEv) else e
                     for e in case.evidence if not isinstance(e, NodeLabelsEv))
    return msgspec.structs.replace(case, evidence=evidence, expect=Expect(healthy=True))


def test_a_mig_apply_that_failed_last_degrades_the_running_mig_manager() -> None:
    # NVIDIA/mig-parted#157: the A30's second GPU refuses the profile; the manager keeps running.
    assert top_pair(_case("mig-parted-157-a30-second-gpu-profile-id")) == ("mig-manager", "error_device")


def test_the_same_manager_that_applied_a_config_afterwards_is_healthy() -> None:
    case = _case("mig-parted-157-a30-second-gpu-profile-id")
    done = 'time="2024-12-31T06:46:10Z" level=info msg="Successfully updated to MIG config: all-1g.6gb"\n'
    assert top_pair(_append(case, done)) is None


def test_a_program_s_device_not_found_is_not_the_api_s_object_deleted_since() -> None:
    # Mellanox/k8s-rdma-shared-dev-plugin#94: 'RDMA device "issm" not found' is the plugin's own
    # lookup; 'nodes "x" not found' (the API's NotFound, a plural resource) heals by retrying.
    case = _case("k8s-rdma-shared-dev-plugin-94-issm-not-found")
    assert top_pair(case) == ("rdma-device-plugin", "error_not_found")


def test_a_collector_failing_on_every_scrape_degrades_the_node_exporter() -> None:
    # prometheus/node_exporter#3265: EINVAL reading an InfiniBand counter drops every IB series.
    case = _case("node-exporter-3265-cx7-infiniband-collector-invalid-argument")
    assert top_pair(case) == ("node-exporter", "error_unclassified")


def test_errors_about_the_host_outside_the_stack_do_not_alarm() -> None:
    # kubernetes-sigs/node-feature-discovery#1556 (an ifb link's speed) and prometheus/node_exporter
    # #1511 (no /sys/class/infiniband on a host without IB): both run and do their job.
    for name in ("nfd-1556-speed-paravirtual-healthy", "gpu-operator-658-nfd-usb-gadget-speed-healthy",
                 "node-exporter-1511-no-infiniband-sysfs-noise-healthy"):
        assert top_pair(_case(name)) is None, name


def test_a_bare_einval_from_the_kernel_is_not_a_configuration_error() -> None:
    kb = load_kb()
    einval = ('err="error obtaining InfiniBand class info: failed to read file '
              '\\"/sys/class/infiniband/mlx5_0/ports/1/counters/VL15_dropped\\": invalid argument"')
    assert kb.class_of(einval) != "error_config_invalid"
    flag = 'Error: invalid argument "abc" for "--fail-on-init-error" flag: strconv.ParseBool: parsing "abc"'
    assert kb.class_of(flag) == "error_config_invalid"


def test_an_api_refusal_the_component_falls_back_from_still_degrades_it() -> None:
    # NVIDIA/dcgm-exporter#39: no Role to read its metrics ConfigMap; the exporter falls back to
    # its built-in counters and keeps running, so the custom metrics never appear.
    case = _case("dcgm-exporter-39-configmap-forbidden-no-role")
    assert top_pair(case) == ("dcgm-exporter", "error_permission_denied")
    kb = load_kb()
    refusal = ('User "system:serviceaccount:monitoring:dcgm-exporter" cannot get resource "configmaps" '
               'in API group "" in the namespace "monitoring"')
    assert kb.class_of(refusal) == "error_permission_denied"


def test_a_failure_the_catalog_knows_ends_the_log_though_its_words_are_a_timeout() -> None:
    # Mellanox/k8s-rdma-shared-dev-plugin#98: the kubelet never dialled the plugin's socket back;
    # "context deadline exceeded" heals by retrying elsewhere, but registration is done once.
    case = _case("k8s-rdma-shared-dev-plugin-98-registration-dial-deadline")
    assert top_pair(case) == ("rdma-device-plugin", "rdma_plugin_registration_failed")
    registered = "2024/03/22 05:59:49 hca_3.sock gets registered successfully at Kubelet\n"
    assert top_pair(_append(case, registered)) is None


def test_a_node_exporter_collector_of_a_host_subsystem_outside_the_stack_does_not_alarm() -> None:
    # prometheus/node_exporter logs a failing collector on every scrape, naming it; hwmon or
    # thermal_zone failing on odd hardware says nothing about the GPU stack, infiniband does.
    case = _case("node-exporter-3265-cx7-infiniband-collector-invalid-argument")
    other = msgspec.structs.replace(case, evidence=tuple(
        msgspec.structs.replace(e, text=e.text.replace("name=infiniband", "name=hwmon"))
        if isinstance(e, LogEv) else e for e in case.evidence))
    assert top_pair(other) is None
    assert top_pair(case) == ("node-exporter", "error_unclassified")
