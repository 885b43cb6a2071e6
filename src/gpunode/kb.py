"""The knowledge base: every cause code gpunode can name, as validated data.

Each entry (data/causes/*.toml) says what a cause means, how to fix it, the
next commands to run, and optionally what text identifies it (log lines,
event messages, node command output). Checks emit cause codes; the KB turns
them into titles and next steps, and matches signatures in raw text. Adding a
known failure signature is one entry in one file.
"""

from __future__ import annotations

import re
import string
import threading
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from importlib import resources
from types import ModuleType
from typing import Any, Literal

import msgspec

from gpunode.catalog import load_catalog
from gpunode.datatoml import load_data_toml
from gpunode.errors import BundleError
from gpunode.model import Status
from gpunode.pattern_literals import SHIPPED_LITERALS
from gpunode.relazy import lazy_compile

MatchSource = Literal[
    "log", "event", "waiting", "node_cmd", "node_file", "node_condition", "text", "decisive"
]


#: Sources whose text is a message a component wrote (not a node file or condition).
_QUOTED: tuple[MatchSource, ...] = ("event", "waiting", "log")
#: An errno's or a library's status alone, naming nothing (Go's syscall errors end a chain with
#: it after the path; NVML's status strings after "NVML error"; modprobe's errno after the
#: module it could not insert): what failed is the part before, which then decides the class.
_BARE_ERRNO = lazy_compile(r"(?i:no such file or directory|no such device(?: or address)?|not found)\W{0,3}$")
#: A C program's innermost error: the C library's text in parentheses after the path it
#: concerns ("umad_init: can't read ABI version from /sys/class/infiniband_mad/abi_version (No
#: such file or directory)", rdma-core's libibumad as NVLSM logs it, siderolabs/docs#581). The
#: path and the errno say why; the words before only say what was being done ("ABI version"
#: names the file read, not a mismatch).
_PAREN_ERRNO = lazy_compile(
    r"(?P<path>/[\w.@:+,/-]{1,240}) ?\((?P<errno>(?i:no such file or directory|permission denied|"
    r"operation not permitted|read-only file system|no space left on device|cannot allocate memory|"
    r"device or resource busy|no such device(?: or address)?|is a directory|not a directory|file exists|"
    r"too many open files|connection refused|connection timed out|input/output error|invalid argument))\)")
#: Go's strconv refusing a string as a number. It says only that; the value is a
#: configuration's invalid value where the line names the configuration (a flag, an option),
#: else one the program read elsewhere (a node's OS version, a sysfs counter printing "N/A"),
#: which is the program's own failure to read it, not a configuration to correct.
_STRCONV = lazy_compile(
    r'strconv\.\w{1,20}: parsing \\?"[^"]{0,200}\\?": (?:invalid syntax|value out of range)')
_NAMES_CONFIG = lazy_compile(r"(?i:\b(?:flags?|options?|arguments?|config\w*|settings?|parameters?|"
                             r"environment variables?|env var\w*)\b)")
#: Podman's OCI runtime error kinds (libpod define.ErrOCIRuntime*), which it appends to
#: the runtime's own message: a category after the cause, not the innermost why.
_OCI_KIND = lazy_compile(r"OCI (?:runtime error|permission denied|unavailable|"
                         r"runtime attempted to invoke a command that was not found)\W{0,3}$")
#: What is not the reason in a line: kube-scheduler's preemption summary after the
#: FailedScheduling reasons ("0/2 nodes are available: 1 Insufficient nvidia.com/gpu.
#: preemption: 0/2 nodes are available: 1 No preemption victims found ..."), which says
#: only that evicting pods would not help; and a C++ logger's source location and level
#: after the message ("... [DcgmHostEngineHandler.cpp:1866] [Class::Func] dcgm_level=ERROR");
#: and a Go program's wait status on a line of its own after the error text a child printed
#: ("... pivot_root .: invalid argument\nexit status 1": os/exec's ExitError is the
#: ProcessState's "exit status N", os/exec_posix.go; runc relays a hook's stderr after its
#: exit, "%w, stdout: %s, stderr: %s", libcontainer/configs/config.go), which says only that the
#: process failed; the errno before it says why. One after a colon is the chain's error itself.
_NOT_THE_REASON = lazy_compile(r"(?i:[.,;]?\s*\bpreemption: \d+/\d+ nodes are available\b.*$"
                               r"|\s*\[[^\]\s]{1,300}\.(?:c|cc|cpp|h|hpp|go):\d+\](?:\s*\[[\w:~<>]{1,120}\])?"
                               r"(?:\s*\w*level=\w+)?\s*$|(?<=\w)\s+exit status \d{1,3}\s*$)")


class Match(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One way to recognise a cause in raw text.

    ``source`` scopes the search: ``log`` lines of the entry's component's
    containers (optionally only ``containers``), ``event`` messages about its
    pods or its node (optionally only ``reasons``), ``waiting`` container
    waiting/terminated reasons and messages, ``node_cmd``/``node_file`` the
    node's command output or file named by ``name``, ``node_condition`` the
    node's conditions, ``text`` only for ``gpunode explain``, ``decisive`` a class of
    decisive lines (``gpunode.decisive``: a generic cause the line falls in when no
    catalogued one matches; classes are tried in file order). ``own`` limits an
    ``event`` match to events about the component's own pods (a scheduling
    message about one pod says nothing about its neighbours); generic ("*")
    causes always match only their own pods. ``seen_in`` traces a symptom down
    the stack: a ``log`` or ``waiting`` match of a lower component's cause is
    also read in the pods of these (higher) components ("*": every stack
    component), but only where that component is itself failing, so a line in
    a healthy pod never accuses the layer below. Read in a lower component's
    pod (the validator's binary in another operand's init container), the
    cause explains that component's failure instead.

    ``while_running`` marks a ``log`` signature as decisive on its own, even in
    the current log of a container that runs and is ready: the line says the
    component does not do its job (the operator's every reconcile fails, the
    plugin never registered), so no crash or wait will show. The last matching
    line counts, and only while no later line of the same log matches
    ``unless`` (the error was followed by success: the plugin registered on a
    retry, the policy reconciled). With ``seen_in``, such a signature is read
    in those components' pods even while they run. ``example`` is the line such a
    signature decides, where the cause's own example is another source's (an NVML
    message, not an installer's): it must match, and ``unless`` must not.
    """

    source: MatchSource
    pattern: str
    containers: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()
    name: str | None = None
    own: bool = False
    seen_in: tuple[str, ...] = ()
    while_running: bool = False
    unless: str | None = None
    example: str | None = None

    @property
    def regex(self) -> re.Pattern[str]:
        return _compiled(self.pattern)

    @property
    def unless_regex(self) -> re.Pattern[str] | None:
        return _compiled(self.unless) if self.unless else None


@cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


class Cause(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A cause code with its meaning, fix, next steps and signatures.

    ``component`` "*" marks a generic cause (a pod state) that any component can
    have. ``aggregate`` marks a cluster cause that only sums up node states (a
    policy "notReady"): node root causes below it explain it away.
    ``fix_for`` gives a generic cause the fix in a component's own terms (an OOM-killed
    operator is raised through the operator's chart value, not any chart's).
    ``reports`` are the public failure reports (field corpus cases, tests/field)
    this cause was recognised in. ``standalone`` signatures prove a problem on
    their own; others only refine
    a component already seen failing, so a stray line never invents a root
    cause.
    """

    code: str
    component: str
    title: str
    explanation: str
    fix: str
    fix_for: dict[str, str] = {}
    next_steps: tuple[str, ...] = ()
    references: tuple[str, ...] = ()
    reports: tuple[str, ...] = ()
    status: Literal["failed", "degraded", "benign"] = "failed"
    standalone: bool = False
    aggregate: bool = False
    specificity: int = 50
    match: tuple[Match, ...] = ()
    example: str = ""
    near_miss: str = ""
    #: A state (crash loop, init failing, no GPUs advertised) rather than a reason: the
    #: component's own decisive line, put in its class, names the reason instead.
    state: bool = False
    #: Other components whose own words carry this cause: the program it is about runs as
    #: one of them in another deployment (Fabric Manager in the driver container under the
    #: GPU Operator, as its own host unit otherwise). Their decisive lines are read against
    #: its signatures too (``KnowledgeBase.catalogued_in``); nothing else is scoped by it.
    also_for: tuple[str, ...] = ()

    def fix_of(self, component: str) -> str:
        """The fix as ``component`` needs it: its own text where the entry has one."""
        return self.fix_for.get(component, self.fix)

    @property
    def severity(self) -> Status:
        """The one verdict both ``diagnose`` and ``explain`` give this cause: a ``benign``
        cause (an application Xid) is evidence only, never a problem."""
        return Status.UNKNOWN if self.status == "benign" else Status(self.status)

    @property
    def is_problem(self) -> bool:
        return self.status != "benign"


#: The kernel's module loader reporting its own failure ("modprobe: FATAL: Module
#: nvidia-peermem not found in directory /lib/modules/6.8.0-1059-azure", "modprobe: ERROR:
#: could not insert 'nvidia_modeset': No such device"): the program that failed is the
#: loader, whatever words its reason uses, so the class is read by the precedence over the
#: whole line (module_load first), not from its innermost reason. A program that runs the
#: loader relays its stderr quoted, after its own words of any length (ceph-csi's CSI node
#: plugin: 'modprobe failed (an error (exit status 1) occurred while running modprobe args:
#: [nbd]): "modprobe: FATAL: Module nbd not found in directory ..."', ceph/ceph-csi#2878's
#: "%q" of the stderr, ceph/ceph-csi#2918): kmod's own "could not insert '%s': %s" (its
#: tools/modprobe.c) gives the kernel's errno for the module, Exec format error (ENOEXEC)
#: a module built for another kernel or machine, not a file of the caller's.
_LOADER_FAILED = lazy_compile(r"(?:^|[\s\]:\"'])(?:modprobe|insmod|rmmod): (?:ERROR|FATAL)\b")
#: A program's check of its own configuration that failed: the Go idiom 'validating <section>
#: config: %w' (CRI-O's Config.Validate: "validating runtime config: conmon validation: invalid
#: conmon path: stat /usr/libexec/crio/conmon: no such file or directory", cri-o/cri-o#3776).
#: The configuration holds a value that does not validate, whatever the innermost reason (a
#: configured path that is not there), so the precedence reads the whole line, as for the
#: loader: configuration comes before a missing file.
_VALIDATING_CONFIG = lazy_compile(
    r"(?i:(?:^|[\s\"'=:])validat(?:e|ing) (?:[\w-]+ ){0,2}config(?:uration)?: )")
#: The API server's admission refusing a pod for its security settings: OpenShift's security
#: context constraints ("is forbidden: unable to validate against any security context
#: constraint: [... Invalid value: "hostPath": hostPath volumes are not allowed ...]",
#: SumoLogic/sumologic-kubernetes-collection#2717), PodSecurity admission ("violates PodSecurity
#: \"restricted:latest\": ...") and the older PodSecurityPolicy. The refusal is the verdict and
#: the list after it the settings each policy rejects, so the whole line decides: a permission
#: the pod's service account lacks, not a configuration error in one of those settings.
_ADMISSION_REFUSED = lazy_compile(
    r"\bis forbidden: (?:unable to validate against any (?:security context constraint|pod security policy)|"
    r"violates PodSecurity\b)")

#: The shell that could not run a program by its path: bash's words in a script ("<script>:
#: line <n>: <path>: No such file or directory", execve's ENOENT for the command, exit status
#: 127) say in another form what dash says as "<script>: <n>: <path>: not found" and bash
#: itself as "command not found" for a name looked up in PATH. A path in a folder of programs
#: (bin, sbin, libexec) is the command the shell ran, not a file it was asked to read, so it is
#: read as the program not found.
_SHELL_RAN_NO_PROGRAM = lazy_compile(
    r"(?P<head>:\s*line \d+: /(?:[\w.+-]+/)*(?:s?bin|libexec)/[\w.+-]+): No such file or directory\s*$")
#: A shell reading a program as its script: an image that declares its binary as CMD only, under
#: a base whose entrypoint is a shell, hands the ELF file to the shell, which stops at its first
#: line ("/bin/k8s-rdma-shared-dp: line 1: syntax error: unexpected \")\"", busybox ash;
#: dash's "<path>: 1: Syntax error: ..."; bash's "... syntax error near unexpected token").
#: Mellanox/k8s-rdma-shared-dev-plugin#218, fixed by declaring ENTRYPOINT (#229). A program in a
#: folder of programs, its name with no script suffix, on line 1: the image's way of starting it,
#: not a configuration the program read, so no class of its own (a script's or a file's syntax
#: error anywhere else keeps the configuration class).
_SHELL_READ_PROGRAM = lazy_compile(
    r"^(?P<head>/(?:[\w.+-]+/)*(?:s?bin|libexec)/[\w+-]+): (?:line )?1: [Ss]yntax error\b.*$")
#: Go's os/exec looking up a program named by a path (exec.LookPath, src/os/exec/lp_unix.go:
#: a name holding a slash is stat'ed directly and the stat error wrapped as
#: 'exec: "<name>": <error>'), as runc relays it for a container's entrypoint ('starting container
#: process caused "exec: \"/bin/bash\": stat /bin/bash: no such file or directory"'): the program
#: the container was told to run is not in its image, which the same lookup by a bare name says
#: as "executable file not found in $PATH". Read as the program not found.
_EXEC_NO_PROGRAM = lazy_compile(
    r'(?P<head>\bexec: \\?"(?P<name>[^"\\\s]{1,240})\\?": )(?:l?stat (?P=name): )?'
    r'no such file or directory\b')
#: A DCGM call that failed with its numeric status ("dcgmGetValuesSince_v2 failed with error code
#: -16", dcgm-exporter's clock-events collector on a MIG GPU, NVIDIA/dcgm-exporter#317). The
#: number is a dcgmReturn_t (dcgm_structs.h, as go-dcgm's const block repeats it) and says which
#: side failed: the codes of ``_DCGM_CODE_CLASS`` are read by that table; any other keeps the
#: line's words' reading. No data yet, stale data and a field not watched (-14, -15, -16) are the
#: state of the caller's own request (a field group it did not watch for that entity), not of the
#: GPU, so no class of a failing part fits them.
_DCGM_CODE = lazy_compile(r"\bdcgm\w*\b[^\n]{0,120}?\b(?:error|return|status) code:? (?P<code>-\d{1,3})\b")
_DCGM_CODE_CLASS = {
    -12: "error_version_mismatch",  # DCGM_ST_VER_MISMATCH
    -14: "error_unclassified",  # DCGM_ST_NO_DATA
    -15: "error_unclassified",  # DCGM_ST_STALE_DATA
    -16: "error_unclassified",  # DCGM_ST_NOT_WATCHED
    -17: "error_permission_denied",  # DCGM_ST_NO_PERMISSION
    -18: "error_device",  # DCGM_ST_GPU_IS_LOST
    -19: "error_device",  # DCGM_ST_RESET_REQUIRED
    -25: "error_not_found",  # DCGM_ST_LIBRARY_NOT_FOUND
}
#: A cache entry not yet computed (None is a computed answer).
_UNSEEN = object()

#: The catch-all class: a decisive line that fits no other.
UNCLASSIFIED = "error_unclassified"


class _KbFile(msgspec.Struct, forbid_unknown_fields=True):
    cause: list[Cause]


@dataclass(frozen=True)
class KnowledgeBase:
    """All causes, indexed by code and by (component, source) for matching."""

    causes: tuple[Cause, ...]

    @cached_property
    def by_code(self) -> dict[str, Cause]:
        return {c.code: c for c in self.causes}

    def get(self, code: str) -> Cause:
        cause = self.by_code.get(code)
        if cause is None:
            raise KeyError(f"cause code {code!r} is not in the knowledge base")
        return cause

    def matchers(self, component: str, source: MatchSource) -> list[tuple[Cause, Match]]:
        """Signatures that may be searched in ``source`` text of ``component``."""
        return self._matcher_index.get((component, source), [])

    def catalogued_in(self, component: str, line: str) -> Cause | None:
        """The most specific catalogued cause of ``component`` whose signature for a quoted
        message (an event, a container state, a log line) matches ``line``: what a line
        another component's pod said about it means, when the catalog knows it."""
        found = [(cause, m) for source in _QUOTED for cause, m in self._quoted_matchers(component, source)
                 if m.regex.search(line) and not (m.unless_regex and m.unless_regex.search(line))]
        return max((c for c, m in found if self.fits(c, line, m)), key=lambda c: c.specificity,
                   default=None)

    def fits(self, cause: Cause, line: str, match: Match | None = None) -> bool:
        """Whether ``line`` may mean ``cause``, by the cause's own meaning: its example is a
        real line of it, and the class that example falls in is the cause's class. A line
        that falls in a more specific class (earlier in the precedence) and holds none of
        the cause's class's words says something the cause does not: the toolkit's 'unable to
        load config' signature names a config it could not open (containerd_not_patched:
        '... open /runtime/config-dir/config.toml: no such file or directory'), not one it
        could not parse ('(1, 1): parsing error: keys cannot contain { character'), which is
        error_config_invalid. A line of the cause's class, or of a less specific one, or of
        none, fits: the catalogued cause says more than the class. The example speaks only
        for the signatures it is a line of: a ``match`` that does not match it reads another
        step of the cause (cdi_spec_generation_failed's example is a CDI device the runtime
        could not resolve; its toolkit log signature is the spec's generation failing, whatever
        the step below said: NixOS/nixpkgs#397065's NVML library not found)."""
        own = self.example_class(cause.code)
        if own is None or (match is not None and not match.regex.search(cause.example or "")):
            return True
        said = self.class_of(line)
        if said is None or said == own or self.class_rank(said) > self.class_rank(own):
            return True
        return any(cls.code == own and regex.search(line) for cls, regex in self.classes)

    def class_rank(self, code: str) -> int:
        """A class's place in the precedence (0 the most specific vocabulary)."""
        return self._class_ranks.get(code, len(self._class_ranks))

    @cached_property
    def _class_ranks(self) -> dict[str, int]:
        return {cause.code: rank for rank, (cause, _regex) in enumerate(self.classes)}

    def example_class(self, code: str) -> str | None:
        """The class of a catalogued cause's example line, None where it falls in none."""
        known = self._example_classes.get(code, _UNSEEN)
        if known is _UNSEEN:
            cause = self.get(code)
            known = self._example_classes[code] = (
                self.class_of(cause.example) if cause.example and cause.component != "*" else None)
        return known if isinstance(known, str) else None

    @cached_property
    def _example_classes(self) -> dict[str, object]:
        return {}

    def _quoted_matchers(self, component: str, source: MatchSource) -> list[tuple[Cause, Match]]:
        """``matchers`` and the signatures of causes catalogued ``also_for`` the component."""
        also = self._also_index.get((component, source))
        own = self.matchers(component, source)
        return own if also is None else [*own, *also]

    @cached_property
    def _also_index(self) -> dict[tuple[str, str], list[tuple[Cause, Match]]]:
        index: dict[tuple[str, str], list[tuple[Cause, Match]]] = {}
        for cause in self.causes:
            for other in cause.also_for:
                for m in cause.match:
                    index.setdefault((other, m.source), []).append((cause, m))
        return index

    def catalogued_elsewhere(self, component: str, line: str) -> Cause | None:
        """A catalogued cause of another component whose signature for a quoted message or
        pasted text matches ``line``: the line is that component's symptom (the operator's
        "could not find kernel full version" is NFD's missing label), not ``component``'s
        own failure. A signature kept to named containers (the GPU operator's validator's
        ``toolkit-validation``: nvidia-smi there tests the toolkit's injection) reads the line
        only there: in another component's own log the same words are that program's own
        (nvidia-smi in a metrics agent's pod without the library, utkuozdemir/nvidia_gpu_exporter#105,
        #146, influxdata/telegraf#4388)."""
        for cause in self.causes:
            if cause.component in ("*", component):
                continue
            if any(m.source in (*_QUOTED, "text") and not m.containers and m.regex.search(line)
                   for m in cause.match):
                return cause
        return None

    @cached_property
    def classes(self) -> tuple[tuple[Cause, re.Pattern[str]], ...]:
        """The classes of decisive lines, in the order they are tried (most specific first)."""
        return tuple((c, m.regex) for c in self.causes for m in c.match if m.source == "decisive")

    def line_class(self, line: str) -> Cause | None:
        """The class of a (decisive) line, read from its innermost error out: a Go error
        chain ("creating symlink: symlink a b: file exists") says why last and only where
        before, so the shortest tail that falls in a class decides; the whole line falls
        in the first class whose pattern it matches (the catch-all at worst)."""
        if _STRCONV.search(line) and not _NAMES_CONFIG.search(line):
            line = _STRCONV.sub("not a number", line)  # a value read elsewhere, not configured
        line = _NOT_THE_REASON.sub("", line) or line
        line = _SHELL_RAN_NO_PROGRAM.sub(r"\g<head>: not found", line)
        line = _EXEC_NO_PROGRAM.sub(r"\g<head>executable file not found", line)
        line = _SHELL_READ_PROGRAM.sub(r"\g<head>: read by the shell as a script", line)
        dcgm = _DCGM_CODE.search(line)
        if dcgm is not None and int(dcgm["code"]) in _DCGM_CODE_CLASS:  # DCGM's own status decides
            return self.get(_DCGM_CODE_CLASS[int(dcgm["code"])])
        if _LOADER_FAILED.search(line) or _VALIDATING_CONFIG.search(line) \
                or _ADMISSION_REFUSED.search(line):  # the whole line decides
            return self._first_class(line)
        parts = line.split(": ")
        last = len(parts) - 1
        for start in range(last, 0, -1):
            if start == last and (_BARE_ERRNO.match(parts[start]) or _OCI_KIND.match(parts[start])):
                continue  # an errno alone says what only with the path before it; a kind, not why
            tail = ": ".join(parts[start:])
            cause = self._errno_class(tail) or self._first_class(tail)
            if cause is not None and cause.code != UNCLASSIFIED:
                return cause
        return self._errno_class(line) or self._first_class(line)

    def _errno_class(self, text: str) -> Cause | None:
        """The class of the last C-style ``path (errno)`` in ``text``, read as the path and its
        errno alone; None where there is none or it falls in no class."""
        found = max(_PAREN_ERRNO.finditer(text), key=lambda m: m.start(), default=None)
        if found is None:
            return None
        cause = self._first_class(f"{found['path']}: {found['errno']}")
        return cause if cause is not None and cause.code != UNCLASSIFIED else None

    def _first_class(self, text: str) -> Cause | None:
        for cause, regex in self.classes:
            if regex.search(text):
                return cause
        return None

    def class_of(self, line: str) -> str | None:
        """The code of the class a line falls in, None for the catch-all (no known class)."""
        cause = self.line_class(line)
        return None if cause is None or cause.code == UNCLASSIFIED else cause.code

    @cached_property
    def traced(self) -> list[tuple[Cause, Match]]:
        """Signatures that are also read in other (failing) components' pods."""
        return [(c, m) for c in self.causes for m in c.match if m.seen_in]

    @cached_property
    def node_text_patterns(self) -> dict[tuple[str, str], tuple[str, ...]]:
        """(source, file name) -> every signature searched in that node file, whatever its
        component: a node's file is searched once for all of them (``candidate_lines``)."""
        out: dict[tuple[str, str], list[str]] = {}
        for cause in self.causes:
            for m in cause.match:
                if m.source in ("node_cmd", "node_file"):
                    out.setdefault((m.source, (m.name or "").lstrip("/")), []).append(m.pattern)
        return {key: tuple(dict.fromkeys(patterns)) for key, patterns in out.items()}

    @cached_property
    def _matcher_index(self) -> dict[tuple[str, str], list[tuple[Cause, Match]]]:
        index: dict[tuple[str, str], list[tuple[Cause, Match]]] = {}
        for cause in self.causes:
            for m in cause.match:
                if _read_in_owner(cause, m):
                    index.setdefault((cause.component, m.source), []).append((cause, m))
        return index


def _read_in_owner(cause: Cause, m: Match) -> bool:
    """Whether a signature is read in its own component's pods. A ``seen_in`` signature is
    a symptom a lower layer leaves in other components' pods (the device plugin that finds
    no NVML because no NVIDIA runtime prepared it): read in the owner's own log it would
    blame the owner for a line that says something else (the toolkit's CDI step reporting
    NVML's ERROR_LIBRARY_NOT_FOUND is its own failure, not a container started without the
    runtime). Unless the owner is among its readers ("*" or named)."""
    return not m.seen_in or "*" in m.seen_in or cause.component in m.seen_in


def validate(causes: Sequence[Cause], origin: str, seen: set[str] | None = None, *,
             patterns: bool = True) -> None:
    """Unique codes, known components, compiling patterns, usable templates.

    ``seen``: the codes of files validated before (each file's causes are checked once;
    the set is extended with this file's codes). ``patterns=False`` leaves out compiling
    and linting the regexes (two thirds of the time): see ``shipped_kb_texts``."""
    known = {*load_catalog().ids, "*"}
    seen = set() if seen is None else seen
    for cause in causes:
        where = f"{origin}: cause {cause.code!r}"
        if not re.fullmatch(r"[a-z][a-z0-9_]*", cause.code):
            raise ValueError(f"{where}: codes are snake_case")
        if cause.code in seen:
            raise ValueError(f"{where}: duplicate code")
        seen.add(cause.code)
        if cause.component not in known:
            raise ValueError(f"{where}: unknown component {cause.component!r}")
        _check_fix_for(cause, known, where)
        if not set(cause.also_for) <= known - {"*", cause.component}:
            raise ValueError(f"{where}: also_for names an unknown component or its own")
        if cause.state and cause.aggregate:  # node causes explain an aggregate, not a line
            raise ValueError(f"{where}: an aggregate cause is not a state")
        if any(m.source == "decisive" for m in cause.match) and (cause.component != "*" or cause.state):
            raise ValueError(f"{where}: a class of decisive lines is generic (component '*'), not a state")
        for m in cause.match:
            _validate_match(m, where, known, patterns)
        for step in cause.next_steps:
            _template_fields(step)


def _validate_match(m: Match, where: str, known: set[str], patterns: bool) -> None:
    if patterns:
        _check_pattern(m.pattern, where)
        if m.unless is not None:
            _check_pattern(m.unless, where)
    if m.source in ("node_cmd", "node_file") and not m.name:
        raise ValueError(f"{where}: {m.source} matches need a name")
    if m.seen_in and (m.source not in ("log", "waiting") or not set(m.seen_in) <= known):
        raise ValueError(f"{where}: seen_in needs a log or waiting match and known components")
    if m.source == "decisive" and (m.seen_in or m.while_running or m.containers or m.reasons):
        raise ValueError(f"{where}: a decisive class has a pattern only")
    if m.while_running and m.source != "log":
        raise ValueError(f"{where}: while_running needs a log match")
    if m.unless is not None and not m.while_running:
        raise ValueError(f"{where}: unless needs while_running (it cancels a decisive line)")
    if m.example is not None and not m.while_running:
        raise ValueError(f"{where}: a match's example needs while_running (the cause's serves)")


def _check_pattern(pattern: str, where: str) -> None:
    """The pattern compiles and has no unbounded gap (re.error or ValueError otherwise)."""
    re.compile(pattern)
    if unbounded_gap(pattern):
        raise ValueError(f"{where}: {pattern!r} has an unbounded .* or .+ before more "
                         "pattern (quadratic on long lines); bound it, e.g. .{0,1000}")


def _check_fix_for(cause: Cause, known: set[str], where: str) -> None:
    """Per-component fixes belong to generic causes and name catalog components."""
    if cause.fix_for and (cause.component != "*" or not set(cause.fix_for) <= known - {"*"}):
        raise ValueError(f"{where}: fix_for is for generic causes and names known components")


def unbounded_gap(pattern: str) -> bool:
    """Whether ``.*``/``.+`` without an upper bound is followed by more pattern.

    Searching such a pattern costs the rest of the line at every place its prefix
    occurs: quadratic in the line length (a 1 MB line took minutes). Trailing ones,
    followed only by anchors, cost one pass.
    """
    from re import _constants as sre  # type: ignore[attr-defined]
    from re import _parser as sre_parse  # type: ignore[attr-defined]

    repeats = (sre.MAX_REPEAT, sre.MIN_REPEAT)

    def scan(items: list[Any], followed: bool) -> bool:
        """``followed``: whether more pattern comes after this sequence."""
        for index, (op, av) in enumerate(items):
            more = followed or any(i[0] is not sre.AT for i in items[index + 1:])
            if op in repeats:
                high, sub = av[1], list(av[2])
                if high == sre.MAXREPEAT and [o for o, _ in sub] == [sre.ANY] and more:
                    return True
                inner = [sub]
            elif op is sre.SUBPATTERN:
                inner = [list(av[3])]
            else:
                inner = [list(b) for b in av[1]] if op is sre.BRANCH else []
            if any(scan(seq, more) for seq in inner):
                return True
        return False

    return scan(list(sre_parse.parse(pattern)), False)


def _template_fields(template: str) -> set[str]:
    fields = {f for _, f, _, _ in string.Formatter().parse(template) if f}
    unknown = fields - TEMPLATE_FIELDS
    if unknown:
        raise ValueError(f"unknown template fields {sorted(unknown)} in {template!r}")
    return fields


TEMPLATE_FIELDS = {
    "node", "namespace", "pod", "container", "daemonset", "operator_namespace",
    "gpu-index", "bus-id",  # the GPU the evidence names (its PCI bus id), parse/gpu_ref.py
}


def parse_kb(texts: Mapping[str, str], *, patterns: bool = True) -> KnowledgeBase:
    """Decode and validate KB files (name → TOML text); errors name the file.
    ``patterns``: also compile and lint every signature (see ``validate``)."""
    causes: list[Cause] = []
    codes: set[str] = set()
    for origin, text in sorted(texts.items()):
        try:
            parsed = msgspec.convert(load_data_toml(text), _KbFile)
            validate(parsed.cause, origin, codes, patterns=patterns)
        except (tomllib.TOMLDecodeError, msgspec.ValidationError, ValueError, re.error) as exc:
            raise BundleError(f"{origin}: invalid knowledge base entry: {exc}") from exc
        causes.extend(parsed.cause)
    return KnowledgeBase(tuple(causes))


def load_kb() -> KnowledgeBase:
    """Read once per process; the lock matters because msgspec builds its type
    information on first use, and doing that from two threads at once can crash
    (server threads of the test API server all call this)."""
    with _LOAD_LOCK:
        return _load_kb()


_LOAD_LOCK = threading.Lock()


@cache
def _load_kb() -> KnowledgeBase:
    """The knowledge base shipped with the package (read once per process).

    Its signatures are compiled when first searched, not linted here: the test suite
    checks the shipped files with every check (``parse_kb(shipped_kb_texts())``), and
    doing it again at each start cost every command about 180 ms."""
    return parse_kb(shipped_kb_texts(), patterns=False)


def shipped_kb_texts() -> dict[str, str]:
    """The package's knowledge base files (name → TOML text)."""
    folder = resources.files("gpunode").joinpath("data/causes")
    return {
        f"causes/{entry.name}": entry.read_text("utf-8")
        for entry in folder.iterdir()
        if entry.name.endswith(".toml")
    }


def render_steps(cause: Cause, values: Mapping[str, str]) -> tuple[str, ...]:
    """Next steps with real names filled in; unknown names stay as <placeholders>."""
    return tuple(step.format_map(_Placeholders(values)) for step in cause.next_steps)


class _Placeholders(dict[str, str]):
    def __init__(self, values: Mapping[str, str]) -> None:
        super().__init__(values)

    def __missing__(self, key: str) -> str:
        return f"<{key}>"


@dataclass(frozen=True)
class TextHit:
    """A signature that matched one line of text."""

    cause: Cause
    line_no: int
    line: str


def scan_lines(lines: Iterable[str], matchers: Sequence[tuple[Cause, Match]]) -> list[TextHit]:
    """First matching line per cause, in one pass over the text."""
    return first_hits(enumerate(lines, start=1), matchers)


def first_hits(numbered: Iterable[tuple[int, str]],
                matchers: Sequence[tuple[Cause, Match]]) -> list[TextHit]:
    hits: dict[str, TextHit] = {}
    pending = list(matchers)
    wanted = len({c.code for c, _ in pending})
    for line_no, line in numbered:
        for cause, m in pending:
            if cause.code not in hits and m.regex.search(line):
                hits[cause.code] = TextHit(cause, line_no, line.strip())
        if len(hits) == wanted:
            break
    return list(hits.values())


def decisive_hit(lines: Sequence[str], cause: Cause, m: Match) -> TextHit | None:
    """The last line ``m`` matches (``line_no`` counted from the top), unless a later
    line matches ``m.unless``: an error that was followed by success was transient."""
    hits = scan_split_lines(lines, [(cause, m)], reverse=True)
    if not hits:
        return None
    index = len(lines) - hits[0].line_no
    cancel = m.unless_regex
    if cancel is not None and cancel.search("\n".join(lines[index + 1:])):
        return None
    return TextHit(cause, index + 1, hits[0].line)


def scan_split_lines(lines: Sequence[str], matchers: Sequence[tuple[Cause, Match]],
                     *, reverse: bool = False, text: str | None = None) -> list[TextHit]:
    """``scan_lines`` over lines that hold no line break (``str.splitlines`` output),
    optionally last line first; the same hits, found with one regex pass.

    All the signatures are compiled into one alternation (``combined``) that is
    searched across the whole text; only lines where it matches are tried
    signature by signature, in the order ``scan_lines`` would visit them.
    Each search restarts at the line after a match, so a match running across
    a line break cannot hide a later line: no line that some signature matches
    is ever skipped. ``line_no`` counts in visiting order, as in ``scan_lines``.
    """
    if not lines or not matchers:
        return []
    if text is None:  # callers that scan the same lines again pass it, joined once
        text = "\n".join(lines)
    patterns = tuple(m.pattern for _, m in matchers)
    if not may_match(text, literal_gate(patterns)):
        return []
    programs = combined(patterns)
    candidates = sorted({i for program in programs for i in candidate_lines(text, program)})
    if reverse:
        count = len(lines)
        numbered = ((count - i, lines[i]) for i in reversed(candidates))
    else:
        numbered = ((i + 1, lines[i]) for i in candidates)
    return first_hits(numbered, matchers)


@cache
def combined(patterns: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    """Regexes that together match wherever any of ``patterns`` matches (``^``/``$`` per
    line): one alternation, plus one each for patterns that refer to their own groups
    (a backreference would point at another pattern's group inside the alternation)."""
    unique = list(dict.fromkeys(patterns))
    alone = [p for p in unique if _refers_to_groups(p)]
    joined = [p for p in unique if p not in alone]
    programs = [re.compile(p, re.MULTILINE) for p in alone]
    if joined:
        programs.insert(0, re.compile("|".join(f"(?:{p})" for p in joined), re.MULTILINE))
    return tuple(programs)


def _refers_to_groups(pattern: str) -> bool:
    """Backreferences or named groups: the pattern cannot join an alternation as is."""
    return "(?P" in pattern or re.search(r"\\[1-9]", pattern) is not None


def ascii_candidate_lines(text: str, patterns: tuple[str, ...]) -> list[int]:
    """Indexes of the ``\n``-separated lines of ASCII ``text`` where one of ``patterns`` may
    match: every line where one does, found by one RE2 pass over the bytes (byte offsets
    are character offsets in ASCII; RE2's patterns are widened, so it may stop on more
    lines, never on fewer), and by Python's ``re`` for patterns RE2 does not take."""
    program, rest = _re2scan().compile_prefilter(patterns)
    found = set(_re2scan().line_indexes(program, text.encode("ascii"))) if program is not None else set()
    for regex in combined(rest) if rest else ():
        found.update(candidate_lines(text, regex))
    return sorted(found)


@cache
def _re2scan() -> ModuleType:
    """The RE2 scanner, loaded by the first node-file search (start-up time)."""
    from gpunode import re2scan

    return re2scan


def candidate_lines(text: str, regex: re.Pattern[str]) -> list[int]:
    """Indexes of the ``\\n``-separated lines of ``text`` where ``regex`` finds a match start."""
    found: list[int] = []
    pos, line = 0, 0
    search = regex.search
    while True:
        match = search(text, pos)
        if match is None:
            return found
        start = match.start()
        line += text.count("\n", pos, start)
        found.append(line)
        end = text.find("\n", start)
        if end < 0:
            return found
        pos, line = end + 1, line + 1


#: A literal shorter than this says too little to rule a text out (it is in most texts).
_MIN_LITERAL = 3

GateLiteral = tuple[str, bool]  # (text, case-insensitive: held lower-case)


@cache
def literal_gate(patterns: tuple[str, ...]) -> tuple[GateLiteral, ...] | None:
    """Literals such that every match of any of ``patterns`` holds at least one of them,
    or None when some pattern has no usable literal (it may match anything).

    A text holding none of them cannot be matched by any pattern: ``may_match`` rules it
    out with substring searches (C speed, no regex run), the common case of a healthy
    node's files and logs. The literals come from each pattern's parse tree: a run of
    literal characters in its top-level sequence, in a group, in a repeat taken at
    least once, or one from each branch of an alternation."""
    found: set[GateLiteral] = set()
    for pattern in patterns:
        literals = _pattern_literals(pattern)
        if literals is None:
            return None
        found.update(literals)
    # A literal that holds a shorter one searched alike is implied by it: only the shorter
    # is searched.
    kept = [lit for lit in found if not any(
        other != lit and other[1] == lit[1] and other[0] in lit[0] for other in found)]
    return tuple(sorted(kept))


def may_match(text: str, gate: tuple[GateLiteral, ...] | None) -> bool:
    """Whether some pattern of ``literal_gate``'s set may match a line of ``text`` (False
    only where none can). A case-insensitive literal rules out ASCII text only: Python's
    case folding matches characters that ``str.lower`` does not bring together (``ſ``)."""
    if gate is None:
        return True
    lowered: str | None = None
    for literal, folded in gate:
        if not folded:
            if literal in text:
                return True
            continue
        if lowered is None:
            if not text.isascii():
                return True
            lowered = text.lower()
        if literal in lowered:
            return True
    return False


def _pattern_literals(pattern: str) -> frozenset[GateLiteral] | None:
    """``parse_pattern_literals``, looked up first in the table made from the shipped
    knowledge base (``gpunode.pattern_literals``): parsing its patterns with ``re``'s
    parser at each start cost a diagnosis about 40 ms."""
    known = SHIPPED_LITERALS.get(pattern, _NOT_LISTED)
    if known is _NOT_LISTED:
        return parse_pattern_literals(pattern)
    return None if known is None else frozenset(known)


_NOT_LISTED: Any = object()


def parse_pattern_literals(pattern: str) -> frozenset[GateLiteral] | None:
    """The best set of literals one of which every match of ``pattern`` holds, read from
    its parse tree (None: the pattern has none, or does not compile)."""
    from re import _constants as sre  # type: ignore[attr-defined]
    from re import _parser as sre_parse  # type: ignore[attr-defined]

    try:
        parsed = sre_parse.parse(pattern)
    except re.error:
        return None
    folded = bool(parsed.state.flags & re.IGNORECASE)
    return _sequence_literals(list(parsed), folded, sre)


def _sequence_literals(items: list[Any], folded: bool, sre: Any) -> frozenset[GateLiteral] | None:
    """The best set of literals one of which every match of the sequence ``items`` holds."""
    best: frozenset[GateLiteral] | None = None

    def consider(candidate: frozenset[GateLiteral] | None) -> None:
        nonlocal best
        if candidate and (best is None or _literal_score(candidate) > _literal_score(best)):
            best = candidate

    run: list[str] = []
    for op, av in [*items, (None, None)]:
        if op is sre.LITERAL:
            run.append(chr(av))
            continue
        consider(_run_literal("".join(run), folded))
        run = []
        if op is sre.SUBPATTERN:
            _group, add, remove, sub = av
            inner = (folded or bool(add & re.IGNORECASE)) and not remove & re.IGNORECASE
            consider(_sequence_literals(list(sub), inner, sre))
        elif op is sre.BRANCH:
            branches = [_sequence_literals(list(b), folded, sre) for b in av[1]]
            if all(branches):
                consider(frozenset().union(*branches))  # type: ignore[arg-type]
        elif op in (sre.MAX_REPEAT, sre.MIN_REPEAT, getattr(sre, "POSSESSIVE_REPEAT", None)) \
                and op is not None and av[0] >= 1:
            consider(_sequence_literals(list(av[2]), folded, sre))
    return best


def _run_literal(run: str, folded: bool) -> frozenset[GateLiteral] | None:
    if len(run) < _MIN_LITERAL or (folded and not run.isascii()):
        return None
    return frozenset({(run.lower() if folded else run, folded)})


def _literal_score(literals: frozenset[GateLiteral]) -> tuple[int, int]:
    """Longer literals rule out more texts; fewer cost fewer searches."""
    return min(len(text) for text, _ in literals), -len(literals)
