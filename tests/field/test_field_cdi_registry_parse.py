"""A CDI spec that does not parse, as a container start logged it (checks.cdi_registry): Podman's
libpod and the NVIDIA runtime's CDI modifier log "The following errors were triggered when
creating the CDI registry: ..." only while injecting a container's CDI devices, and the CDI
library's 'failed to parse CDI Spec "<path>"' inside it names the spec that could not serve it.

Sources: libpod container_internal_linux.go (https://github.com/containers/podman), the toolkit's
internal/modifier/cdi.go (https://github.com/NVIDIA/nvidia-container-toolkit), the CDI library's
pkg/cdi (https://github.com/cncf-tags/container-device-interface); reports
https://github.com/NVIDIA/nvidia-container-toolkit/issues/38 ('unknown field "hostPath"', Podman
4.2) and https://github.com/NVIDIA/nvidia-container-toolkit/issues/1860 ('unknown field
"additionalGids"', Podman 4.9)."""

from __future__ import annotations

import pytest
from case import Case, synthetic_case
from scoreboard import top_pair

_PODMAN = ('DEBU[0000] The following errors were triggered when creating the CDI registry: '
           'map[/etc/cdi/nvidia.yaml:[failed to load CDI Spec: failed to parse CDI Spec '
           '"/etc/cdi/nvidia.yaml": failed to unmarshal CDI Spec: error unmarshaling JSON: while '
           'decoding JSON: json: unknown field "additionalGids"]]')
_RUNTIME_LOG = ('{"level":"debug","msg":"The following errors were triggered when creating the CDI '
                'registry: map[/var/run/cdi/nvidia.yaml:[failed to parse CDI Spec \\"/var/run/cdi/'
                'nvidia.yaml\\": failed to unmarshal CDI Spec: error converting YAML to JSON: yaml: '
                'line 12: did not find expected key]]","time":"2025-03-01T10:00:00Z"}')


def _journal(case_id: str, text: str) -> Case:
    return synthetic_case(case_id, [
        {"kind": "node-info", "fields": {"osImage": "Red Hat Enterprise Linux 9.4 (Plow)"}},
        {"kind": "node-cmd", "name": "journal-runtime.txt", "text": text + "\n"},
    ], healthy=False)


def test_the_runtime_journal_line_names_the_spec() -> None:
    assert top_pair(_journal("cdi-registry-journal", _PODMAN)) == ("container-toolkit", "cdi_spec_invalid")


def test_the_nvidia_runtime_log_line_names_the_spec() -> None:
    case = synthetic_case("cdi-registry-runtime-log", [
        {"kind": "node-file", "path": "var/log/nvidia-container-runtime.log", "text": _RUNTIME_LOG + "\n"},
    ], healthy=False)
    assert top_pair(case) == ("container-toolkit", "cdi_spec_invalid")


HEALTHY = [
    # an injection whose registry had no errors
    'DEBU[0000] Injecting CDI devices: [nvidia.com/gpu=all]',
    # the registry's other errors: a device defined twice is not a spec that fails to parse
    'DEBU[0000] The following errors were triggered when creating the CDI registry: map[/etc/cdi/'
    'nvidia.yaml:[conflicting device "nvidia.com/gpu=0" (specs "/etc/cdi/nvidia.yaml", '
    '"/var/run/cdi/nvidia.yaml")]]',
    # a spec that parses, loaded at a refresh
    'time="2025-03-01T10:00:00Z" level=info msg="CDI registry refreshed" specs=1',
]


@pytest.mark.parametrize("line", HEALTHY)
def test_other_registry_lines_stay_silent(line: str) -> None:
    case = synthetic_case(f"cdi-registry-healthy-{HEALTHY.index(line)}", [
        {"kind": "node-cmd", "name": "journal-runtime.txt", "text": line + "\n"},
    ])
    pair = top_pair(case)
    assert pair is None or pair[1] != "cdi_spec_invalid", pair
