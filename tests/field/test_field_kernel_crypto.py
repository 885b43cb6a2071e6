"""The open NVIDIA modules built against a kernel without its crypto API (checks.kernel_crypto):
libspdm's check of its crypto backend finding the stubs ("libspdm_check_crypto_backend: Error -
libspdm expects LKCA but found stubs!", NVIDIA/open-gpu-kernel-modules kernel-open/nvidia's
libspdm glue) is the kernel's configuration, of the not-found class (aleph-im/aleph-vm#1271: an
SEV-SNP guest kernel without the crypto options, CC mode unable to come up). Look-alike: the
same check's healthy notices, where the kernel has it, say nothing."""

from __future__ import annotations

from case import Case, synthetic_case
from scoreboard import top_pair

STUBS = "[    5.120000] libspdm_check_crypto_backend: Error - libspdm expects LKCA but found stubs!\n"
FOUND = ("[    5.120000] libspdm_check_crypto_backend: LKCA wrappers found.\n"
         "[    5.120001] libspdm_check_crypto_backend: LKCA calls may still fail if modules have not "
         "been loaded!\n")


def _case(text: str) -> Case:
    return synthetic_case("x-kernel-crypto", [{"kind": "node-cmd", "name": "dmesg.txt", "text": text}],
                          healthy=False, cluster={"gpu_node": {"gpu": "NVIDIA H200 NVL", "gpus": 1}})


def test_libspdm_on_stubs_is_the_kernels_missing_crypto_api() -> None:
    assert top_pair(_case(STUBS)) == ("kernel", "error_not_found")


def test_libspdm_finding_the_kernel_crypto_api_says_nothing() -> None:
    assert top_pair(_case(FOUND)) is None
