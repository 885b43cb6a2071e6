"""A flag dump is a program's configuration, not a failure: the tail of a hyphenated flag's
name ('--fail-on-init-error="true"') is no error field, while a key of its own (err="...") is."""

from __future__ import annotations

from gpunode.decisive import decisive_line

#: Project-HAMi/HAMi#861: the device plugin's flag dump, all its log showed before it crash-looped
FLAG = 'I0212 09:13:34.971002 1104831 flags.go:36] FLAG: --fail-on-init-error="true"'
#: a klog info line that carries its error as a field (the look-alike that stays an error)
FIELD = 'I0212 09:13:35.000000 1104831 main.go:90] "Failed to start plugin" err="nvml: library not found"'


def test_a_flags_name_is_no_error_field() -> None:
    assert decisive_line([FLAG]) is None
    found = decisive_line([FLAG, FIELD])
    assert found is not None and found.line == FIELD
