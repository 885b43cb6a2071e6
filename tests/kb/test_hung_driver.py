"""A hung task whose call trace holds NVIDIA frames is the driver's hang; one whose trace
holds none (a file system's), or a header with no trace, is not read here."""

from __future__ import annotations

from gpunode.checks.hung_driver import driver_hangs

HEADER = "[  721.028170] INFO: task nvc:[driver]:5403 blocked for more than 120 seconds."
PREAMBLE = [
    "[  721.028229]       Tainted: P           O    4.4.146-1.el7.elrepo.x86_64 #1",
    '[  721.028273] "echo 0 > /proc/sys/kernel/hung_task_timeout_secs" disables this message.',
    "[  721.028346] Call Trace:",
    "[  721.028379]  [<ffffffff8170fca4>] __mutex_lock_slowpath+0xb4/0x130",
    "[  721.028383]  [<ffffffff8170fd3f>] mutex_lock+0x1f/0x2f",
]
UVM = "[  721.028422]  [<ffffffffa09c376e>] uvm_gpu_retain_by_uuid+0x1e/0x40 [nvidia_uvm]"
ZFS = "[132001.302820]  [<ffffffffa019649b>] zfs_zget+0x17b/0x320 [zfs]"


def test_trace_in_nvidia_uvm_is_the_drivers_hang() -> None:
    (hang,) = driver_hangs([HEADER, *PREAMBLE, UVM])
    assert (hang.header_no, hang.frame_no) == (1, 7)
    assert "[nvidia_uvm]" in hang.frame


def test_abbreviated_trace_on_one_line_counts() -> None:
    lines = ["kernel: INFO: task nvidia-smi:82355 blocked for more than 491 seconds.",
             "kernel: Call Trace: uvm_va_space_destroy -> channel_pool_add -> uvm_channel_manager_create"]
    assert len(driver_hangs(lines)) == 1


def test_rm_mutex_frame_counts() -> None:
    lines = ["INFO: task python3:77 blocked for more than 245 seconds.", "Call Trace:", " <TASK>",
             " os_acquire_mutex+0x2e/0x50 [nvidia]", " </TASK>"]
    assert len(driver_hangs(lines)) == 1


def test_look_alikes_stay_silent() -> None:
    # a file system's hang
    assert driver_hangs([HEADER.replace("nvc:[driver]", "nfsd"), *PREAMBLE, ZFS]) == []
    # the header alone (no trace), an NVIDIA module's load line after it
    loaded = "[  722.1] nvidia-uvm: Loaded the UVM driver, major device number 510."
    assert driver_hangs([HEADER, loaded]) == []
    # an NVIDIA word before the trace starts (the task's name) is no frame
    assert driver_hangs(["INFO: task uvm_worker:9 blocked for more than 120 seconds.", "Call Trace:",
                         " schedule+0x35/0x80", " </TASK>", " uvm_ioctl+0x13e0/0x16f0 [nvidia_uvm]"]) == []
    # the NVIDIA frame belongs to the next task's report, whose own header is read for it
    hangs = driver_hangs([HEADER.replace("nvc:[driver]", "nfsd"), *PREAMBLE, ZFS, HEADER, *PREAMBLE, UVM])
    assert [h.header_no for h in hangs] == [8]
