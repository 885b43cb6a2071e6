"""A CDI spec that the program starting the container generates itself, failing as the start's
error ('Failed generating CDI spec: ...', LXD's CDI GPU passthrough: the known issue of
canonical/lxd's 6.9 release notes), is the catalogued cdi_spec_generation_failed in an event or a
container's waiting message, as the toolkit's own log line of the same failure is. Look-alikes: a
spec generated, or being generated, and a spec the runtime read but could not parse."""

from __future__ import annotations

import pytest

from gpunode.kb import load_kb

KB = load_kb()

LXD = ('Error: Failed starting device "gpu0": Failed generating CDI spec: Failed determining NVIDIA '
       'driver root path: Failed running: /snap/lxd/<revision>/gpu-2604/bin/gpu-2604-provider-wrapper '
       'printenv NVIDIA_DRIVER_ROOT: exit status 1')


def _matches(source: str, line: str) -> set[str]:
    return {cause.code for cause, m in KB.matchers("container-toolkit", source)  # type: ignore[arg-type]
            if m.regex.search(line)}


@pytest.mark.parametrize("source", ["event", "waiting"])
def test_generation_failing_at_start_is_catalogued(source: str) -> None:
    assert "cdi_spec_generation_failed" in _matches(source, LXD)
    assert "cdi_spec_generation_failed" in _matches(source, "error generating CDI spec: no NVIDIA devices")
    found = KB.catalogued_in("container-toolkit", LXD)
    assert found is not None and found.code == "cdi_spec_generation_failed"


@pytest.mark.parametrize(
    "line",
    [
        'Generated CDI spec with version 0.5.0',
        'Generating CDI spec for device "gpu0"',
        'failed to parse CDI Spec "/etc/cdi/nvidia.yaml": failed to unmarshal CDI Spec',
    ],
)
@pytest.mark.parametrize("source", ["event", "waiting"])
def test_look_alike_is_not_generation_failing(source: str, line: str) -> None:
    assert "cdi_spec_generation_failed" not in _matches(source, line)
