"""CRI-O without an NVIDIA runtime handler: GPUs come through the toolkit's OCI hook.

Pure: the hook files arrive parsed (from the bundle's node files or the probe's facts),
with whether the hook's binary exists where that was seen; shared by the toolkit check
and the probe's runtime check so both judge a hook setup the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from gpunode.parse.oci_hooks import OciHook

NO_GPU_HOOK = "crio_no_nvidia_runtime_or_hook"
HOOK_BINARY_MISSING = "oci_hook_binary_missing"
HOOK_INVALID = "oci_hook_invalid"


@dataclass(frozen=True)
class HookFile:
    """One hook file found on the node: parsed, or the reason CRI-O skips it."""

    file: str
    hook: OciHook | None
    error: str | None = None
    binary_present: bool | None = None  # None: the node's file system was not seen


@dataclass(frozen=True)
class HookVerdict:
    """``cause`` None: a working NVIDIA hook; ``file`` is the hook file the line is about."""

    cause: str | None
    file: str | None
    detail: str


def judge_hooks(hooks: Sequence[HookFile], hooks_dirs: Sequence[str]) -> HookVerdict:
    """The NVIDIA hook CRI-O injects at prestart, else why GPU containers get no GPU.

    ``hooks_dirs`` are the directories CRI-O reads (its ``hooks_dir``, or the defaults);
    a hook file elsewhere is never loaded. A malformed file is only the cause while no
    NVIDIA hook works (CRI-O skips it and loads the rest).
    """
    read = [h for h in hooks if _in(h.file, hooks_dirs)]
    nvidia = [h for h in read if h.hook is not None and h.hook.nvidia]
    working = [h for h in nvidia if _runs_at_prestart(h.hook) and h.binary_present is not False]
    if working:
        return _healthy(working[0])
    missing = next((h for h in nvidia if h.binary_present is False), None)
    if missing is not None and missing.hook is not None:
        detail = f"{missing.file}: {missing.hook.path} does not exist"
        return HookVerdict(HOOK_BINARY_MISSING, missing.file, detail)
    broken = next((h for h in read if h.error is not None), None)
    if broken is not None:
        return HookVerdict(HOOK_INVALID, broken.file, broken.error or broken.file)
    return HookVerdict(NO_GPU_HOOK, None, _why_none(hooks, nvidia, hooks_dirs))


def _healthy(found: HookFile) -> HookVerdict:
    hook = found.hook
    assert hook is not None
    seen = {True: "present", None: "not checked"}.get(found.binary_present, "missing")
    return HookVerdict(None, found.file, f"{found.file} runs {hook.path} at prestart ({seen})")


def _runs_at_prestart(hook: OciHook | None) -> bool:
    return hook is not None and "prestart" in hook.stages and hook.injected


def _in(file: str, directories: Sequence[str]) -> bool:
    parent = PurePosixPath(file).parent
    return any(parent == PurePosixPath(d) for d in directories)


def _why_none(hooks: Sequence[HookFile], nvidia: Sequence[HookFile], hooks_dirs: Sequence[str]) -> str:
    """What the hook directories hold instead of a working NVIDIA hook."""
    if nvidia:
        hook = nvidia[0].hook
        assert hook is not None
        when = "when matched" if hook.injected else "never"
        return f"{nvidia[0].file}: stages {', '.join(hook.stages)}; injected {when}"
    elsewhere = [h.file for h in hooks if h.hook is not None and h.hook.nvidia]
    dirs = ", ".join(hooks_dirs)
    if elsewhere:
        return f"{elsewhere[0]} is outside CRI-O's hooks_dir ({dirs})"
    return f"no NVIDIA hook in {dirs}"
