"""The toolkit's CDI generator whose spec the CDI library refused to write: the library validates
every device as the spec is written and refuses one with no container edits ('invalid device,
empty device edits', container-device-interface pkg/cdi/device.go), so nvidia-ctk's 'failed to
write spec: invalid CDI Spec: ...' means no spec was written at all (Azure/AgentBaker#9150:
nvidia-cdi-refresh running before the driver's user-space libraries were installed). The
library the generator could not find on the way is why, not a runtime hook that found none:
the cause is the spec's generation. Look-alikes: the generator's healthy lines, and the same
validation quoted by another component's log, are not the toolkit's failure."""

from __future__ import annotations

from typing import Any

from case import synthetic_case
from scoreboard import top_pair

from gpunode.kb import load_kb

REFUSED = ('nvidia-ctk: level=error msg="failed to write spec: invalid CDI Spec: failed add device '
           '\\"all\\": invalid device, empty device edits"')
NO_LIBCUDA = 'nvidia-ctk: level=error msg="failed to locate libcuda.so: libcuda.so.580.159.04: not found"'
GENERATED = ('nvidia-ctk: level=info msg="Generated CDI spec with version 0.8.0"\n'
             'nvidia-ctk: level=info msg="Wrote CDI spec to /var/run/cdi/nvidia.yaml"')


def _toolkit(text: str) -> list[dict[str, Any]]:
    return [{"kind": "log", "component": "container-toolkit", "text": text + "\n"}]


def test_a_spec_the_library_refused_is_its_generation_failing() -> None:
    found = load_kb().catalogued_in("container-toolkit", REFUSED)
    assert found is not None and found.code == "cdi_spec_generation_failed"


def test_the_refusal_outweighs_the_library_it_could_not_find() -> None:
    case = synthetic_case("x-cdi-write-refused", _toolkit(f"{NO_LIBCUDA}\n{REFUSED}\n{NO_LIBCUDA}"),
                          cluster={"cdi": True})
    assert top_pair(case) == ("container-toolkit", "cdi_spec_generation_failed")


def test_a_written_spec_is_no_failure() -> None:
    case = synthetic_case("x-cdi-written", _toolkit(GENERATED), cluster={"cdi": True})
    assert top_pair(case) is None


def test_the_validation_words_are_not_the_toolkits_in_another_component() -> None:
    # the DRA plugin's NodePrepareResources quotes the same validation for the spec it writes
    line = ("FailedPrepareDynamicResources: failed to prepare dynamic resources: invalid device, "
            "empty device edits")
    for component in ("dra-kubelet-plugin", "device-plugin"):
        found = load_kb().catalogued_in(component, line)
        assert found is None or found.code != "cdi_spec_generation_failed"
