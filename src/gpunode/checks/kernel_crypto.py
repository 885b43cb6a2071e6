"""The kernel the open NVIDIA modules were built against lacks its crypto API.

The open kernel modules talk SPDM with a GPU in confidential-computing mode through libspdm,
whose crypto calls they route to the Linux kernel's crypto API (LKCA) where the kernel they
are built against has it, and to stubs where it does not (the build's USE_LKCA; the stubs'
``libspdm_check_crypto_backend`` prints "libspdm_check_crypto_backend: Error - libspdm expects
LKCA but found stubs!", NVIDIA/open-gpu-kernel-modules kernel-open/nvidia/libspdm_*.c). With
the stubs the GPU's SPDM session, and with it CC mode, cannot come up (aleph-im/aleph-vm#1271:
an SEV-SNP guest kernel without CRYPTO_AEAD, AKCIPHER, ECDH, ECDSA, RSA and X.509 parsing,
fixed by adding them to the guest kernel's config). What to change is the kernel's
configuration, so the kernel's failure, of the class of what the driver expected and did not
find. The check's healthy line ("libspdm_check_crypto_backend: LKCA wrappers found.") says
nothing.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpunode.checks.base import check, kernel_log_holds
from gpunode.checks.context import NodeContext
from gpunode.checks.decisive import line_finding
from gpunode.decisive import Decisive
from gpunode.model import Finding, Status
from gpunode.relazy import lazy_compile

_LITERAL = "libspdm_check_crypto_backend"
_STUBS = lazy_compile(r"\blibspdm_check_crypto_backend: Error - libspdm expects LKCA but found stubs\b")


@check("kernel", may_find=kernel_log_holds(_LITERAL))
def crypto_api_missing(ctx: NodeContext, component: str) -> Iterator[Finding]:
    """The driver's libspdm found stubs where it needs the kernel's crypto API."""
    split = ctx.text_lines("cmd", "dmesg.txt")
    if split is None:
        return
    lines = split[0]
    index = next((i for i, line in enumerate(lines) if _LITERAL in line and _STUBS.search(line)), None)
    if index is None:
        return
    where = f"{ctx.obs.path_of('cmd', 'dmesg.txt')}:{index + 1}"
    yield line_finding(ctx.kb, component, Status.FAILED, Decisive(index + 1, lines[index].strip(), 1), where,
                       verb="lacks the crypto API the GPU driver's SPDM needs", standalone="true",
                       line_class="error_not_found")
