"""Two causes that a state hid. GFD's missing labels are a state of the node (the labels GFD
should have written are not there), so what GFD said explains them: its log's error line
is the cause where it has one (NVIDIA/gpu-feature-discovery#47: the NodeFeature object it
writes is refused for its name). And a configuration refused for its schema version
('invalid containerd configuration in "<file>": unsupported containerd configuration
version: expected 3, got 2', k0sproject/k0s#7689) is a version mismatch, still a
configuration the runtime refused."""

from __future__ import annotations

import pytest

from gpunode.checks.decisive import Text, _refuses_config, decisive_finding, line_finding, state_to_explain
from gpunode.decisive import decisive_line
from gpunode.kb import load_kb
from gpunode.model import Finding, Status

KB = load_kb()
LABELS = Finding("gfd", Status.DEGRADED, "gfd_labels_missing", (), {}, 20)
GFD_LOG = "logs/gpu-operator/gpu-feature-discovery-x/gpu-feature-discovery.log"


def test_missing_labels_are_explained_by_gfds_own_error() -> None:
    assert state_to_explain(KB, [LABELS]) is LABELS
    line = ('E0629 02:05:03.783259       1 main.go:95] failed to create NodeFeature object '
            '"nvidia-features-for-": NodeFeature.nfd.k8s-sigs.io "nvidia-features-for-" is invalid: '
            'metadata.name: Invalid value: '
            '"nvidia-features-for-": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric '
            "characters")
    found = decisive_finding(KB, "gfd", LABELS, [Text(GFD_LOG, ["I0629 02:05:03 Starting", line], "reports")])
    assert found is not None
    assert found.cause == "error_config_invalid"
    assert found.context["decisive_state"] == "gfd_labels_missing"


def test_missing_labels_with_a_quiet_log_stay_the_state() -> None:
    quiet = Text(GFD_LOG, ["I0629 02:05:03.783259       1 main.go:95] Sleeping for 60s"], "reports")
    assert decisive_finding(KB, "gfd", LABELS, [quiet]) is None


@pytest.mark.parametrize(
    ("line", "cls"),
    [
        ('[invalid containerd configuration in "/etc/k0s/containerd.d/nvidia.toml": unsupported containerd '
         "configuration version: expected 3, got 2]", "error_version_mismatch"),
        ("unsupported config version 1", "error_version_mismatch"),
        # a value the configuration does not allow stays a configuration error
        ('failed to load config: invalid value "foo" for field default_runtime_name', "error_config_invalid"),
    ],
)
def test_schema_version_is_a_version(line: str, cls: str) -> None:
    assert KB.class_of(line) == cls


def _finding(line: str) -> Finding:
    found = decisive_line([line], KB.class_of)
    assert found is not None
    return line_finding(KB, "container-runtime", Status.DEGRADED, found, "cmd/journal-runtime.txt:1",
                        verb="keeps running after")


def test_a_refused_configuration_of_another_version_is_refused() -> None:
    refused = _finding('level=fatal msg="[invalid containerd configuration in '
                       '\\"/etc/k0s/containerd.d/nvidia.toml\\": unsupported containerd '
                       'configuration version: expected 3, got 2]"')
    assert refused.cause == "error_version_mismatch"
    assert _refuses_config(KB, refused)
    assert not _refuses_config(KB, _finding('level=error msg="failed to load plugin: incompatible version of '
                                            'the shim"'))
