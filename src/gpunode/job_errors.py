"""The stack layer a GPU job's own error line names, as validated data (data/job_errors.toml).

A user's GPU pod often carries the only decisive line of a failure, in the words of the
libraries under it: a CUDA runtime or driver API error (by name, by its message text, by its
number), an NVML return code (in the forms its C, Go and Python bindings print), a verbs
work-completion status NCCL relays, a CUPTI result of the profiler the job runs, a DCGM
return code of the DCGM client it runs, a cuDNN or cuTENSOR status that names the driver. Each
entry of the table names the catalog component the error is about and, where one fits, its
cause; it carries the public page that documents it.
Errors that are a program's own business (out of memory, an illegal address, an invalid
argument) are not in it, so a job's bug is never blamed on the stack.

Reading a line costs a few substring tests: a library's forms are tried only where the line
holds the library's name (or, for the few messages that are the library's alone, the message).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Literal, get_args

import msgspec

from gpunode.datatoml import load_data_toml
from gpunode.errors import BundleError
from gpunode.relazy import lazy_compile

Library = Literal["cupti", "cuda", "nvml", "verbs", "dcgm", "cudnn", "cutensor", "job"]
LIBRARIES: tuple[str, ...] = get_args(Library)


class JobError(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One error a job's libraries report, the layer it names and (where one fits) its cause."""

    id: str
    library: Library
    component: str
    source: str
    example: str
    names: tuple[str, ...] = ()
    message: str = ""
    alone: bool = False
    code: int | None = None
    literal: str = ""
    pattern: str = ""
    cause: str = ""
    seen: str = ""


class _File(msgspec.Struct, forbid_unknown_fields=True):
    error: list[JobError]


#: Lowercase words one of which a line holds where it may carry a library's forms. CUPTI is
#: tried before CUDA: its calls' lines often hold a CUDA path (/usr/local/cuda/extras/CUPTI),
#: and a CUPTI number is not CUDA's (35 is CUPTI's insufficient privileges, CUDA's old driver).
#: nvidia-smi prints NVML's words after "Unable to determine the device handle for GPU <id>: ".
_ANCHORS: dict[str, tuple[str, ...]] = {"cupti": ("cupti",), "cuda": ("cuda", "cuinit"),
                                        "nvml": ("nvml", "the device handle for gpu"),
                                        "verbs": ("ibv_wc", "completion"), "dcgm": ("dcgm",),
                                        "cudnn": ("cudnn",), "cutensor": ("cutensor",)}
#: How each library's identifiers begin (the enumerators' own prefixes).
_NAME_PREFIX: dict[str, tuple[str, ...]] = {"cupti": ("CUPTI_ERROR_",), "cuda": ("cudaError", "CUDA_ERROR_"),
                                            "nvml": ("NVML_ERROR_",), "verbs": ("IBV_WC_",),
                                            "dcgm": ("DCGM_ST_",), "cudnn": ("CUDNN_STATUS_",),
                                            "cutensor": ("CUTENSOR_STATUS_", "CUTENSORNET_STATUS_")}
#: Lowercase pieces every name of a library holds in every form (go-nvml's ERROR_X, pynvml's
#: NVMLError_X): a line without one holds no name, and the names' regex is not run.
_NAME_TEXTS: dict[str, tuple[str, ...]] = {"cupti": ("cupti_error_",), "cuda": ("cudaerror", "cuda_error_"),
                                           "nvml": ("error_",), "verbs": ("ibv_wc_",), "dcgm": ("dcgm_st_",),
                                           "cudnn": ("cudnn_status_",),
                                           "cutensor": ("cutensor_status_", "cutensornet_status_")}
#: An error's number in each library's formats. CUDA: "CUDA error 802", "cuda runtime error (802)",
#: "code=802(cudaErrorSystemNotReady)", "cudaGetDeviceCount returned 35", "Cuda failure: 222",
#: "CudaAPIError: [34]" (an identifier ending in Error, not stderr); NVML: "nvmlInit_v2 err: 18";
#: verbs (NCCL's IB transport): "Got completion from peer ... with status=12", "... with error 12";
#: CUPTI (a profiler's call): "(*cuptiProfilerBeginSessionPtr)(&beginSessionParams) failed with
#: error 35". DCGM's codes are negative and printed by name or text only. A number after a CUDA
#: library's own name (cuRAND, cuBLAS, cuFFT, cuDNN, cuSOLVER, cuSPARSE, cuTENSOR, cuFile) is that
#: library's status, not a CUDA error: "cuRAND error 102" is its allocation failure, CUDA's 102 an
#: unlicensed vGPU. The driver API's own calls are not among them (cuTensorMapEncodeTiled is).
_ERROR_WORD = (r"(?:\b(?:error|err|failure|failed|returned|return|code|status|result)|(?<=[a-z])error)\b"
               r"\W{0,3}(?:code\W{0,3})?")
_NUMBERS: dict[str, re.Pattern[str]] = {
    "cuda": lazy_compile(rf"(?:(?i:\bcuda)\w*|\bcu(?!(?i:blas|rand|fft|dnn|solver|sparse|tensor(?!map)|file))"
                         rf"[A-Z]\w*)(?i:.{{0,160}}?{_ERROR_WORD})"
                         r"(?P<code>\d{1,3})\b(?!\.\d)"),
    "nvml": lazy_compile(rf"(?i:\bnvml\w*.{{0,80}}?{_ERROR_WORD})(?P<code>\d{{1,3}})\b(?!\.\d)"),
    "verbs": lazy_compile(r"(?i:\bcompletion\b.{0,160}?\bwith (?:error |status=))(?P<code>\d{1,3})\b"),
    "cupti": lazy_compile(rf"(?i:\bcupti\w*.{{0,160}}?{_ERROR_WORD})(?P<code>\d{{1,3}})\b(?!\.\d)"),
}


def _binding_names(library: str, name: str) -> tuple[str, ...]:
    """``name`` and the forms its bindings print: for NVML_ERROR_X, go-nvml's ERROR_X and
    pynvml's NVMLError_CamelCase (its exception classes, NVMLError_GpuIsLost)."""
    if library != "nvml":
        return (name,)
    rest = name.removeprefix("NVML_ERROR_")
    camel = "".join(part.capitalize() for part in rest.split("_"))
    return (name, f"ERROR_{rest}", f"NVMLError_{camel}")


def _names_regex(names: Iterable[str]) -> re.Pattern[str] | None:
    words = sorted(set(names), key=len, reverse=True)
    return lazy_compile(r"\b(?:" + "|".join(map(re.escape, words)) + r")\b") if words else None


def _messages_regex(messages: Iterable[str]) -> re.Pattern[str] | None:
    texts = sorted(set(messages), key=len, reverse=True)
    return lazy_compile("(?i:" + "|".join(map(re.escape, texts)) + ")") if texts else None


@dataclass(frozen=True)
class _LibraryForms:
    """One library's entries, by the form a line may hold them in."""

    anchors: tuple[str, ...]
    by_name: Mapping[str, JobError]
    by_message: Mapping[str, JobError]
    by_code: Mapping[int, JobError]
    names: re.Pattern[str] | None
    messages: re.Pattern[str] | None
    alone: re.Pattern[str] | None
    name_texts: tuple[str, ...]
    message_texts: tuple[str, ...]
    numbers: re.Pattern[str] | None
    code_texts: tuple[str, ...]

    def read(self, line: str, lower: str) -> JobError | None:
        if any(anchor in lower for anchor in self.anchors):
            return self._named(line, lower) or self._said(line, lower, self.messages) or self._numbered(line)
        return self._said(line, lower, self.alone)

    def _named(self, line: str, lower: str) -> JobError | None:
        if self.names is None or not any(name in lower for name in self.name_texts):
            return None
        m = self.names.search(line)
        return self.by_name[m.group(0)] if m is not None else None

    def _said(self, line: str, lower: str, regex: re.Pattern[str] | None) -> JobError | None:
        if regex is None or not any(message in lower for message in self.message_texts):
            return None
        m = regex.search(line)
        return self.by_message[m.group(0).lower()] if m is not None else None

    def _numbered(self, line: str) -> JobError | None:
        if self.numbers is None or not any(code in line for code in self.code_texts):
            return None  # most lines hold none of the table's numbers: skip the regex
        for m in self.numbers.finditer(line):
            found = self.by_code.get(int(m["code"]))
            if found is not None:
                return found
        return None


def _forms(library: str, entries: Sequence[JobError]) -> _LibraryForms:
    by_name = {form: e for e in entries for name in e.names for form in _binding_names(library, name)}
    by_message = {e.message.lower(): e for e in entries if e.message}
    alone = [e.message for e in entries if e.message and e.alone]
    return _LibraryForms(
        anchors=_ANCHORS[library], by_name=by_name, by_message=by_message,
        by_code={e.code: e for e in entries if e.code is not None},
        names=_names_regex(by_name), messages=_messages_regex(by_message), alone=_messages_regex(alone),
        name_texts=_NAME_TEXTS[library], message_texts=tuple(sorted(by_message)),
        numbers=_NUMBERS.get(library) if any(e.code is not None for e in entries) else None,
        code_texts=tuple(sorted({str(e.code) for e in entries if e.code is not None})))


@dataclass(frozen=True)
class JobErrors:
    """The table, ready to read lines: each library's forms, then the frameworks' words."""

    entries: tuple[JobError, ...]
    libraries: tuple[_LibraryForms, ...]
    words: tuple[tuple[JobError, re.Pattern[str]], ...]

    def read(self, line: str) -> JobError | None:
        """The entry ``line`` reports, or None (a line that names no layer of the stack)."""
        lower = line.lower()
        for forms in self.libraries:
            found = forms.read(line, lower)
            if found is not None:
                return found
        for entry, pattern in self.words:
            if entry.literal in lower and pattern.search(line):
                return entry
        return None


def _build(entries: Sequence[JobError]) -> JobErrors:
    """The table ready to read lines; its regexes are compiled where a line first needs one
    (most lines hold no library's anchor, and no job wording's literal)."""
    libraries = tuple(_forms(lib, [e for e in entries if e.library == lib])
                      for lib in LIBRARIES if lib != "job" and any(e.library == lib for e in entries))
    words = tuple((e, lazy_compile(e.pattern)) for e in entries if e.library == "job")
    return JobErrors(tuple(entries), libraries, words)


@dataclass(frozen=True)
class Known:
    """What an entry may name: the catalog's components, each cause's component ("*" for the
    error classes and pod states), and the class codes."""

    components: frozenset[str]
    causes: Mapping[str, str]
    classes: frozenset[str]


def _problems(entry: JobError, known: Known) -> Iterable[str]:
    """What is wrong with one entry, in words."""
    if entry.component not in known.components:
        yield f"names unknown component {entry.component!r}"
    owner = known.causes.get(entry.cause) if entry.cause else None
    if entry.cause and owner is None:
        yield f"names unknown cause {entry.cause!r}"
    elif entry.cause and entry.cause not in known.classes and owner not in (entry.component, "*"):
        yield f"cause {entry.cause!r} is {owner!r}'s, not {entry.component!r}'s (nor an error class)"
    if not entry.source.startswith("https://") or (entry.seen and not entry.seen.startswith("https://")):
        yield "source and seen must be https:// addresses"
    yield from _form_problems(entry)


def _form_problems(entry: JobError) -> Iterable[str]:
    if entry.library == "job":
        if not entry.pattern or not entry.literal or entry.literal != entry.literal.lower():
            yield "a job's wording needs a pattern and a lowercase literal"
        elif entry.names or entry.message or entry.code is not None:
            yield "a job's wording has a pattern only, no names, message or code"
        return
    if entry.pattern or entry.literal:
        yield f"a {entry.library} error is read by its names, message and code, not a pattern"
    if not (entry.names or entry.message or entry.code is not None):
        yield "needs a name, a message or a code"
    prefixes = _NAME_PREFIX[entry.library]
    for name in entry.names:
        if not re.fullmatch(r"\w+", name) or not name.startswith(prefixes):
            yield f"name {name!r} is not a {entry.library} identifier ({', '.join(prefixes)}...)"
    if entry.alone and not entry.message:
        yield "alone needs a message"
    if entry.code is not None and entry.library not in _NUMBERS:
        yield f"a {entry.library} error has no number format to read a code in"


def _keys(entry: JobError) -> list[tuple[object, ...]]:
    """What must be unique across the table: the id, each name, the (library, code)."""
    return [("id", entry.id), *(("name", n) for n in entry.names),
            *((("code", entry.library, entry.code),) if entry.code is not None else ())]


def validate(entries: Sequence[JobError], known: Known, origin: str,
             seen: set[tuple[object, ...]] | None = None) -> None:
    """Each entry names a known component and cause, is read by one form at least, reads its
    own example, and no id, name or (library, code) is listed twice (here or in ``seen``)."""
    seen = set() if seen is None else seen
    for entry in entries:
        keys = _keys(entry)
        problems = [f"{key[0]} {key[1:]!s} is listed twice" for key in keys if key in seen]
        seen.update(keys)
        problems.extend(_problems(entry, known))
        if not problems:
            try:
                re.compile(entry.pattern)  # (the table compiles it only when a line needs it)
                if not _build((entry,)).read(entry.example):
                    problems.append("does not read its own example")
            except re.error as exc:
                problems.append(f"pattern does not compile: {exc}")
        if problems:
            raise ValueError(f"{origin}: entry {entry.id!r}: {problems[0]}")


def _entries(text: str, known: Known | None, origin: str,
             seen: set[tuple[object, ...]] | None = None) -> list[JobError]:
    """One file's entries, decoded and validated (against ``seen``, the earlier files' keys);
    ``known`` None: decoded only (the shipped files, which the test suite validates)."""
    try:
        parsed = msgspec.convert(load_data_toml(text), _File)
        if known is not None:
            validate(parsed.error, known, origin, seen)
    except ValueError as exc:  # msgspec.ValidationError and tomllib's errors are ValueErrors
        message = str(exc) if str(exc).startswith(origin) else f"{origin}: {exc}"
        raise BundleError(message.splitlines()[0]) from exc
    return parsed.error


def parse_job_errors(text: str, known: Known, origin: str = "job_errors.toml") -> JobErrors:
    """Decode and validate the table; a bad entry is refused with one line naming it."""
    return _build(tuple(_entries(text, known, origin)))


def parse_job_error_files(files: Sequence[tuple[str, str]], known: Known | None) -> JobErrors:
    """Several files (origin, text) read as one table, in order: an id, name or code listed
    in two files is refused naming the later one (``known`` None: decoded, not validated)."""
    seen: set[tuple[object, ...]] = set()
    entries = [e for origin, text in files for e in _entries(text, known, origin, seen)]
    return _build(tuple(entries))


def shipped_known() -> Known:
    """What the shipped catalog and knowledge base hold."""
    from gpunode.catalog import load_catalog
    from gpunode.kb import load_kb

    kb = load_kb()
    return Known(frozenset(load_catalog().ids), {c.code: c.component for c in kb.causes},
                 frozenset(cls.code for cls, _ in kb.classes))


def shipped_job_error_files() -> list[tuple[str, str]]:
    """The table's files shipped with the package (origin, text): data/job_errors.toml, then
    each file of data/job_errors/ by name."""
    data = resources.files("gpunode").joinpath("data")
    files = [("job_errors.toml", data.joinpath("job_errors.toml").read_text("utf-8"))]
    more = data.joinpath("job_errors")
    if more.is_dir():
        files += [(f"job_errors/{f.name}", f.read_text("utf-8"))
                  for f in sorted(more.iterdir(), key=lambda f: f.name) if f.name.endswith(".toml")]
    return files


@cache
def load_job_errors() -> JobErrors:
    """The table shipped with the package (read once per process). Decoded, not validated
    here: the test suite validates the shipped files (``parse_job_error_files`` with
    ``shipped_known()``), and doing it again at each start cost a diagnosis about 34 ms
    (each entry's reader built and run on its example)."""
    return parse_job_error_files(shipped_job_error_files(), None)


def job_error(line: str) -> JobError | None:
    """The shipped table's entry a GPU job's ``line`` reports, or None."""
    return load_job_errors().read(line)
