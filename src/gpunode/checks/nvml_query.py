"""NVML's "Insufficient Permissions" for one query, told from a refused initialisation.

NVML answers NVML_ERROR_NO_PERMISSION in two places. At ``nvmlInit`` it means the driver's
device nodes could not be opened ("Failed to initialize NVML: Insufficient Permissions"): the
stack's fault, read as the driver's device error (or the runtime's confinement). After NVML
opened a GPU it means only that this query needs a privilege the caller lacks: in a container
given a MIG instance, the parent GPU's aggregate memory and utilisation are refused by NVML's
MIG isolation while the GPU's name and the MIG device's own figures answer
(Stability-AI/StableSwarmUI#388: ``NVIDIA A100-SXM4-80GB, 535.161.08, 47, [N/A], [N/A],
[Insufficient Permissions], ...``; ollama/ollama#932, the same refusal where PyTorch uses the
GPU; NVIDIA/nvidia-container-toolkit#842, pynvml's ``nvmlDeviceGetMemoryInfo`` on a MIG device
while ``nvidia-smi -L`` lists it). A job that printed such an answered row has a working stack,
so its NVML refusal says nothing against the driver.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from gpunode.checks.base import MESSAGE
from gpunode.model import Finding
from gpunode.relazy import lazy_compile

#: NVML's no-permission code in a job's words: its text after NVML's name, the enumerator, or
#: the bindings' names for it (pynvml's NVMLError_NoPermission, go-nvml's ERROR_NO_PERMISSION).
_NO_PERMISSION = lazy_compile(r"(?i:\bNVML\b).{0,80}\bInsufficient Permissions\b|\bNVML_ERROR_NO_PERMISSION\b"
                              r"|\bNVMLError_NoPermission\b|\bERROR_NO_PERMISSION\b")
#: NVML refusing to initialise: no device was opened, so not a single query's refusal.
_INIT_REFUSED = lazy_compile(r"\b(?:Failed to initialize NVML|nvmlInit\w*)\b")
#: nvidia-smi's answer for one field it was refused, in a row where another field answered:
#: ``--query-gpu`` CSV (a value not in brackets beside ``[Insufficient Permissions]``) or
#: ``-q``'s ``Total : [Insufficient Permissions]``. nvidia-smi prints either only once NVML
#: initialised and opened the GPU.
_FIELD_REFUSED = "[Insufficient Permissions]"
_CSV_ANSWERED = lazy_compile(r"(?:^|,\s*)[^,\[\]\s][^,\[\]]*(?:,|$)")
_Q_FIELD = lazy_compile(r"^\s*[A-Z][\w .()/-]*?\s+: \[Insufficient Permissions\]\s*$")


def _answered_row(line: str) -> bool:
    """A line of nvidia-smi's output with a field refused and NVML open (see ``_FIELD_REFUSED``)."""
    if _FIELD_REFUSED not in line:
        return False
    if _Q_FIELD.match(line):
        return True
    return "," in line and _CSV_ANSWERED.search(line.replace(_FIELD_REFUSED, "")) is not None


def query_refused(finding: Finding, lines: Sequence[str]) -> bool:
    """Whether ``finding`` is the driver's reading of NVML's no-permission in a job whose log
    shows NVML answering for the GPU (``_answered_row``): one query's privilege, not the stack."""
    said = finding.context.get(MESSAGE, "")
    if finding.component != "driver" or not _NO_PERMISSION.search(said) or _INIT_REFUSED.search(said):
        return False
    return any(_answered_row(line) for line in lines)


def unless_query_refused(finding: Finding, lines: Sequence[str]) -> Iterator[Finding]:
    """``finding``, unless it is one query's refusal in a job NVML answered (``query_refused``)."""
    if not query_refused(finding, lines):
        yield finding
