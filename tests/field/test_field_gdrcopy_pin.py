"""GDRCopy's own tests failing to pin GPU memory: their ASSERT's line for gdr_pin_buffer
(tests/common.hpp, https://github.com/NVIDIA/gdrcopy/blob/master/tests/common.hpp) is a pin the
gdrdrv module and the GPU driver's nvidia_p2p_get_pages under it refused, since the tests make
their buffers as pinning needs them and waive GPUs without GPUDirect support (the open 555
driver on Grace Hopper, https://github.com/NVIDIA/gdrcopy/issues/299; an EINVAL pin,
https://github.com/NVIDIA/gdrcopy/issues/139). An application's own pin failing, or the same
assertion in another program's file, stays the application's (data/job_errors.toml)."""

from __future__ import annotations

from case import gpu_job_case
from scoreboard import top_pair

from gpunode.checks.job_words import job_cause, job_names

#: https://github.com/NVIDIA/gdrcopy/issues/299 (gdrcopy_sanity, 555-open driver)
SANITY = ('Assertion "(gdr_pin_buffer(g, d_A[1], buffer_size, 0, 0, &A_mh[1])) == (0)" '
          "failed at sanity.cpp:446")
#: https://github.com/NVIDIA/gdrcopy/issues/139 (an older sanity's line)
SANITY_OLD = 'Assertion "(gdr_pin_buffer(g, d_ptr, size, 0, 0, &mh)) == (0)" failed at sanity.cpp:188'
#: Look-alikes: UCX's gdr_copy transport pinning an application's buffer, and an application's
#: own assertion in its file
UCX = "[1620000000.1] [host:1:0] gdr_copy_md.c:123  UCX  ERROR gdr_pin_buffer failed. length :65536 ret:22"
OWN = 'Assertion "(gdr_pin_buffer(g, buf, len, 0, 0, &mh)) == (0)" failed at transfer.cpp:91'


def test_gdrcopys_tests_refused_a_pin_name_the_driver() -> None:
    for line in (SANITY, SANITY_OLD):
        assert job_names(line) == "driver" and job_cause(line, "driver") == "error_device"
        assert top_pair(gpu_job_case("x-gdrcopy", line)) == ("driver", "error_device")


def test_an_applications_own_pin_is_not_read() -> None:
    for line in (UCX, OWN):
        assert job_names(line) is None
        assert top_pair(gpu_job_case("x-gdrcopy", line)) != ("driver", "error_device")


#: https://github.com/NVIDIA/gdrcopy/issues/234: gdrdrv loaded by plain modprobe, no /dev/gdrdrv
OPEN = "gdr_open error: Is gdrdrv driver installed and loaded?"
#: Look-alike: UCX's gdr_copy transport reporting the library absent at start-up, then going on
UCX_OPEN = ("[1620000000.1] [host:1:0] gdr_copy_md.c:250  UCX  WARN  "
            "gdr_open failed, gdrcopy transport disabled")


def test_gdrcopys_helper_that_cannot_open_gdrdrv_is_the_driver_s_file_state() -> None:
    assert job_names(OPEN) == "driver" and job_cause(OPEN, "driver") == "error_file_state"
    assert top_pair(gpu_job_case("x-gdrcopy", "Running suite(s): Sanity\n" + OPEN)) == (
        "driver", "error_file_state")


def test_another_program_s_gdr_open_notice_is_not_read() -> None:
    assert job_names(UCX_OPEN) is None
