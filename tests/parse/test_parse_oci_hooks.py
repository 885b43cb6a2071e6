"""OCI hook files as CRI-O reads them: the toolkit's real hook, the 0.1.0 layout, and the
files CRI-O skips (each error names the file)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpunode.checks.crio_hooks import HOOK_INVALID, NO_GPU_HOOK, HookFile, judge_hooks
from gpunode.errors import ParseError
from gpunode.parse.oci_hooks import OCI_HOOK_DIRS, parse_oci_hook

REAL_HOOK = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "crio" / "hooks.d"
REAL_HOOK = REAL_HOOK / "oci-nvidia-hook.json"
FILE = "/usr/share/containers/oci/hooks.d/oci-nvidia-hook.json"


def test_real_toolkit_hook() -> None:
    hook = parse_oci_hook(FILE, REAL_HOOK.read_text())
    assert (hook.version, hook.path) == ("1.0.0", "/usr/bin/nvidia-container-toolkit")
    assert hook.stages == ("prestart",) and hook.args == ("nvidia-container-toolkit", "prestart")
    assert hook.nvidia and hook.injected and hook.always is True and hook.commands == (".*",)


def test_legacy_layout_and_bind_mount_condition() -> None:
    text = json.dumps({"hook": "/usr/libexec/oci/hooks.d/nvidia-container-runtime-hook",
                       "stages": ["prestart"], "hasbindmounts": True})
    hook = parse_oci_hook(FILE, text)
    assert hook.version == "0.1.0" and hook.nvidia and hook.has_bind_mounts and hook.injected


def test_always_false_is_never_injected() -> None:
    hook = parse_oci_hook(FILE, REAL_HOOK.read_text().replace('"always": true', '"always": false'))
    assert not hook.injected


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("{", "not JSON"),
        ('{"version": "2.0.0", "hook": {"path": "/x"}, "stages": ["prestart"]}', "unknown hook version"),
        ('{"version": "1.0.0", "hook": {}, "stages": ["prestart"]}', "missing required property hook.path"),
        ('{"version": "1.0.0", "hook": {"path": "/x"}, "stages": []}', "missing required property stages"),
        ('{"version": "1.0.0", "hook": {"path": "/x"}, "stages": ["prestrat"]}', "unknown stage 'prestrat'"),
        ('{"version": "1.0.0", "hook": {"path": "/x"}, "when": {"always": "yes"}, "stages": ["prestart"]}',
         "when.always must be true or false"),
    ],
)
def test_files_crio_skips_name_the_file(text: str, error: str) -> None:
    with pytest.raises(ParseError, match=error) as caught:
        parse_oci_hook(FILE, text)
    assert str(caught.value).startswith(FILE + ": ")


def test_a_broken_other_hook_beside_a_working_nvidia_hook_is_no_cause() -> None:
    good = HookFile(FILE, parse_oci_hook(FILE, REAL_HOOK.read_text()), binary_present=True)
    other = HookFile("/etc/containers/oci/hooks.d/other.json", None, error="other.json: not JSON")
    assert judge_hooks([other, good], OCI_HOOK_DIRS).cause is None
    assert judge_hooks([other], OCI_HOOK_DIRS).cause == HOOK_INVALID


def test_hook_outside_hooks_dir_is_never_loaded() -> None:
    good = HookFile(FILE, parse_oci_hook(FILE, REAL_HOOK.read_text()), binary_present=True)
    verdict = judge_hooks([good], ("/etc/containers/oci/hooks.d",))
    assert verdict.cause == NO_GPU_HOOK and "outside CRI-O's hooks_dir" in verdict.detail
