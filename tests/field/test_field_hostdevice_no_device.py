"""The host-device CNI refusing an attachment that names no device ('specify either "device",
"hwaddr", "kernelpath" or "pciBusID"', containernetworking/plugins host-device) for a pod that
requests no network device resource: Multus had no allocated device to pass it, so the refusal is
the pod's own spec (a network annotation left on a pod without the resource,
Mellanox/network-operator#1674), not the Network Operator's stack. The look-alike: the same
refusal for a pod that requests the host-device resource and still got no device stays the
operator's."""

from __future__ import annotations

import msgspec
from case import Case
from scoreboard import top_pair

LINE = ('Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox '
        '"a164f0f20932003e4dfc144edeb844e764f0a4f792a6590c114f5143e464ba11": plugin type="multus" '
        'name="multus-cni-network" failed (add): [gds/gds-test/3c15dafb:hostdev-net]: error adding container '
        'to network "hostdev-net": specify either "device", "hwaddr", "kernelpath" or "pciBusID"')


def _case(limits: dict[str, str]) -> Case:
    obj = {"kind": "Pod", "name": "gds-test", "namespace": "gds"}
    raw = {"id": "x-hostdev", "source": "https://example.org/x", "title": "t", "platform": "ubuntu",
           "evidence": [
               {"kind": "workload", "name": "gds-test", "namespace": "gds", "resources": {"limits": limits},
                "state": "ContainerCreating", "message": ""},
               {"kind": "event", "object": obj, "type": "Warning", "reason": "FailedCreatePodSandBox",
                "message": LINE}],
           "expect": {"healthy": True}}
    return msgspec.convert(raw, Case)


def test_a_pod_requesting_no_device_refused_by_host_device_is_its_own_spec() -> None:
    assert top_pair(_case({})) is None


def test_the_same_refusal_for_a_pod_requesting_the_device_stays_the_operators() -> None:
    found = top_pair(_case({"nvidia.com/hostdev": "1"}))
    assert found is not None and found[0] == "network-operator"
