"""A GPU job killed by a bus error (SIGBUS) whose crash site, the first frame above the C
library's, lies in NCCL: NCCL's shared-memory segments are files under /dev/shm it maps, and a
page the container's tmpfs cannot back faults with SIGBUS instead of an error code, so the
container runtime's /dev/shm is too small (NCCL troubleshooting guide, "Docker",
https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html; UCX's handler over
ncclGroupEnd frames fixed by --shm-size, https://github.com/msr-fiddle/pipedream/issues/76;
Open MPI's "Signal: Bus error (7)" in ncclCommInitRank, put down to /dev/shm by an NCCL
maintainer, https://github.com/NVIDIA/nccl/issues/983). A crash site in the job's own code, or
another signal inside NCCL, is no reading of /dev/shm (checks.bus_error)."""

from __future__ import annotations

from case import gpu_job_case
from scoreboard import top_pair

from gpunode.checks.bus_error import nccl_bus_error

SHM = ("container-runtime", "error_resource_exhausted")

#: https://github.com/msr-fiddle/pipedream/issues/76 (UCX's ucs_debug handler, Docker's default
#: /dev/shm; the fix was --shm-size)
UCX = """[8d6bf97c3bf4:3039 :0:3095] Caught signal 7 (Bus error: nonexistent physical address)
==== backtrace (tid:   3095) ====
 0 0x0000000000043090 killpg()  ???:0
 1 0x000000000018bb41 __nss_database_lookup()  ???:0
 2 0x000000000007587d ncclGroupEnd()  ???:0
 3 0x000000000007b0ef ncclGroupEnd()  ???:0
 4 0x0000000000059e97 ncclGetUniqueId()  ???:0
 5 0x00000000000489b1 ???()  /usr/lib/x86_64-linux-gnu/libnccl.so.2:0
 8 0x0000000000008609 start_thread()  ???:0
 9 0x000000000011f133 clone()  ???:0
================================="""
#: Open MPI's handler in the same place (NVIDIA/nccl#983's signal; frames in glibc's form)
OMPI = """[node1:113168] *** Process received signal ***
[node1:113168] Signal: Bus error (7)
[node1:113168] Signal code: Non-existant physical address (2)
[node1:113168] Failing at address: 0x7f2b6a3f1000
[node1:113168] [ 0] /lib/x86_64-linux-gnu/libc.so.6(+0x42520)[0x7f2b8e842520]
[node1:113168] [ 1] /lib/x86_64-linux-gnu/libc.so.6(+0x1a0b7d)[0x7f2b8e9a0b7d]
[node1:113168] [ 2] /usr/lib/x86_64-linux-gnu/libnccl.so.2(+0x4a655)[0x7f2b7c84a655]
[node1:113168] *** End of error message ***"""
#: gdb's form of a crash site in NCCL (NVIDIA/nccl-tests#143 ran the bus error through gdb)
GDB = """Thread 5 "all_reduce_perf" received signal SIGBUS, Bus error.
#0  0x00007ffff56bdbba in ?? () from /lib/x86_64-linux-gnu/libc.so.6
#1  0x00007ffff59d3f89 in ?? () from /lib/x86_64-linux-gnu/libnccl.so.2
#2  0x00007ffff59d5f0e in ?? () from /lib/x86_64-linux-gnu/libnccl.so.2"""
#: Look-alike: the job's own code faults, NCCL only deeper in the chain
OWN_SITE = """[host:77 :0:80] Caught signal 7 (Bus error: nonexistent physical address)
==== backtrace (tid:     80) ====
 0 0x0000000000043090 killpg()  ???:0
 1 0x0000000000012345 load_shard()  /app/loader.cpp:88
 2 0x000000000007587d ncclGroupEnd()  ???:0
================================="""
#: Look-alike: a segmentation fault in NCCL is no /dev/shm reading
SEGV = UCX.replace("Caught signal 7 (Bus error: nonexistent physical address)",
                   "Caught signal 11 (Segmentation fault: address not mapped to object at address 0x8)")


def test_a_bus_error_in_nccls_code_is_the_runtimes_dev_shm() -> None:
    for text in (UCX, OMPI, GDB):
        assert top_pair(gpu_job_case("x-nccl-bus", text)) == SHM, text


def test_the_signal_line_is_quoted_with_the_nccl_frame() -> None:
    found = nccl_bus_error(UCX.splitlines())
    assert found is not None
    signal, frame = found
    assert "Caught signal 7" in signal.line and "ncclGroupEnd" in frame.line


def test_a_crash_site_of_the_job_or_another_signal_is_not_read() -> None:
    for text in (OWN_SITE, SEGV, "Bus error (core dumped)"):
        assert nccl_bus_error(text.splitlines()) is None
        assert top_pair(gpu_job_case("x-nccl-bus", text)) != SHM
