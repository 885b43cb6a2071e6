"""The container runtime refusing a sandbox because it has no handler for the NVIDIA runtime
names the layer that writes that handler into its configuration, the toolkit (issue 20,
"no runtime for" -> runtime configuration), also as the runtime's own journal quotes it with
escaped quotes; the catalogued cause is runtime_handler_missing. Lines are real ones from
public reports (address beside each)."""

from __future__ import annotations

from gpunode.catalog import load_catalog
from gpunode.decisive import message_of
from gpunode.kb import load_kb

# NVIDIA/gpu-operator#432: containerd 1.6.9's journal after the toolkit restarted it
JOURNAL = ('nov 02 18:00:58 beck containerd[10237]: time="2022-11-02T18:00:58.738797825+02:00" level=error '
           'msg="RunPodSandbox for &PodSandboxMetadata{Name:gpu-feature-discovery-qfjgk,'
           'Uid:02c7d4ad-db02-4145-846b-616a94416008,Namespace:gpu-operator,Attempt:2,} failed, error" '
           'error="failed to get sandbox runtime: no runtime for \\"nvidia\\" is configured"')
# canonical/microk8s#2474: the kubelet's event for the same refusal
EVENT = ('Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: '
         'no runtime for "nvidia" is configured')


def test_no_nvidia_handler_names_the_toolkit() -> None:
    named = load_catalog().named_in
    assert named(JOURNAL) == "container-toolkit"
    assert named(EVENT) == "container-toolkit"
    found = load_kb().catalogued_in("container-toolkit", message_of(JOURNAL))
    assert found is not None and found.code == "runtime_handler_missing"


def test_a_handler_of_another_runtime_names_no_nvidia_layer() -> None:
    # a RuntimeClass for another runtime (Kata's) the runtime lacks is not the toolkit's
    line = 'failed to get sandbox runtime: no runtime for "kata-qemu" is configured'
    assert load_catalog().named_in(line) != "container-toolkit"
