"""What a GPU job's lines say about HAMi-core, the vGPU interposer HAMi's device plugin preloads
into the containers it serves, read in general: a call interrupted by the job's own signal
(errno 4, EINTR) names no layer, while the same lock failing with another errno stays the
plugin's; an OOM refusal that counts bytes no device has (2**63 or more, an unsigned count
wrapped below zero) is the library's accounting at fault, while a refusal over the container's
share in real bytes is the share enforced."""

from __future__ import annotations

from typing import Any

from case import Case, synthetic_case
from scoreboard import top_pair

#: Project-HAMi/HAMi#26: the line its maintainer read as EINTR (gunicorn killing its workers)
EINTR = ("[4pdvGPU ERROR (pid:167 thread=140191321859904 multiprocess_memory_limit.c:455)]: "
         "Failed to lock shrreg: 4")
#: Project-HAMi/HAMi#1090: the same lock failing on a region it could not open (EBADF)
EBADF = ("[HAMI-core ERROR (pid:162 thread=139751716722496 multiprocess_memory_limit.c:737)]: "
         "Fail to lock shrreg /tmp/cudevshr.cache: errno=9")
#: Project-HAMi/HAMi-core#100: gpu-burn refused by a wrapped usage count
WRAPPED = ("[HAMI-core ERROR (pid:38 thread=140412686483456 allocator.c:53)]: "
           "Device 0 OOM 18446744073604695040 / 5368709120")
#: Project-HAMi/HAMi#1003: a refusal in real bytes over a 24 GiB share (the share enforced)
REAL = ("[HAMI-core ERROR (pid:25 thread=139892685178688 allocator.c:53)]: "
        "Device 0 OOM 27147995136 / 25757220864")

def _vgpu_job(text: str) -> Case:
    evidence: list[dict[str, Any]] = [
        {"kind": "pod-state", "component": "hami-device-plugin", "state": "Running"},
        {"kind": "workload", "name": "job-0", "namespace": "default", "container": "job",
         "resources": {"limits": {"nvidia.com/gpu": "1", "nvidia.com/gpumem": "5120"}},
         "state": "CrashLoopBackOff", "restarts": 3, "exit_code": 1},
        {"kind": "log", "object": {"kind": "Pod", "name": "job-0", "namespace": "default"},
         "container": "job", "text": text + "\n"}]
    return synthetic_case("x-interposer", evidence)


def test_an_interrupted_lock_names_no_layer() -> None:
    assert top_pair(_vgpu_job(EINTR)) is None


def test_the_lock_failing_with_another_errno_stays_the_plugins() -> None:
    top = top_pair(_vgpu_job(EBADF))
    assert top is not None and top[0] == "hami-device-plugin"


def test_a_wrapped_usage_count_is_the_librarys_accounting() -> None:
    assert top_pair(_vgpu_job(WRAPPED)) == ("hami-device-plugin", "error_resource_exhausted")


def test_a_refusal_in_real_bytes_is_the_share_enforced() -> None:
    assert top_pair(_vgpu_job(REAL)) is None
