"""The kubelet calls a device plugin's PreStartContainer before each container of a pod the
plugin serves, and relays its failure as the container's CreateContainerConfigError ("device
plugin PreStartContainer rpc failed with err: %v", pkg/kubelet/cm/devicemanager): the plugin's
own answer, whatever words follow; the class is its words' own. Tencent's GPU manager's
resources (tencent.com/vcuda-core, vcuda-memory) slice NVIDIA GPUs: a pod asking them is a GPU
workload. Lines from public reports, each address beside it."""

from __future__ import annotations

from typing import Any

import msgspec
from case import Case
from scoreboard import top_pair

#: https://github.com/tkestack/gpu-manager/issues/81 (gpu-manager 1.0.x on a 1.20 kubelet)
CHECKPOINT = ("Error: device plugin PreStartContainer rpc failed with err: rpc error: code = Unknown desc = "
              "PreStartContainer check failed, failed to read from checkpoint file due to json: cannot "
              "unmarshal object into Go struct field PodDevicesEntry.Data.PodDeviceEntries.DeviceIDs "
              "of type []string")
#: https://github.com/elastic-ai/elastic-gpu-scheduler/issues/10 (another plugin's own refusal)
NO_SUCH_POD = ("Error: device plugin PreStartContainer rpc failed with err: rpc error: code = Unknown desc = "
               "not such pod with the same devices list")


def _refused(message: str, limits: dict[str, str]) -> Case:
    pod = {"kind": "Pod", "name": "job-0", "namespace": "default"}
    raw: dict[str, Any] = {
        "id": "x-prestart", "source": "https://example.org/x", "title": "t", "platform": "generic",
        "cluster": {"driver_mode": "host"},
        "evidence": [
            {"kind": "workload", "name": "job-0", "namespace": "default", "container": "main",
             "resources": {"limits": limits}, "state": "CreateContainerConfigError", "message": message},
            {"kind": "event", "object": pod, "type": "Warning", "reason": "Failed", "count": 3,
             "message": message}],
        "expect": {"healthy": True}}
    return msgspec.convert(raw, Case)


def test_a_relayed_prestart_failure_is_the_plugins() -> None:
    vcuda = {"tencent.com/vcuda-core": "50", "tencent.com/vcuda-memory": "10"}
    # the innermost reason ("json: cannot unmarshal ...") gives the class
    assert top_pair(_refused(CHECKPOINT, vcuda)) == ("device-plugin", "error_config_invalid")
    other = top_pair(_refused(NO_SUCH_POD, {"nvidia.com/gpu": "1"}))
    assert other is not None and other[0] == "device-plugin"


def test_the_same_relay_for_a_resource_no_gpu_plugin_serves_is_not_read() -> None:
    # the kubelet's words for an SR-IOV NIC's or Tencent's ENI plugin: not a GPU workload
    assert top_pair(_refused(NO_SUCH_POD, {"intel.com/sriov_netdevice": "1"})) is None
    assert top_pair(_refused(NO_SUCH_POD, {"tencent.com/eni-ip": "1"})) is None
