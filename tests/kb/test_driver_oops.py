"""A kernel oops whose faulting instruction is in an NVIDIA module is the driver's crash; one
faulting elsewhere, a user program's relayed fault, or a warning is not read here."""

from __future__ import annotations

from gpunode.checks.driver_oops import driver_oopses

OLD = [
    "[   32.811290] BUG: unable to handle kernel NULL pointer dereference at 0000000000000340",
    "[   32.812372] IP: [<ffffffffc0740f8f>] _nv011740rm+0x1f/0x170 [nvidia]",
    "[   32.812372] PGD e97efb067 PUD e99caf067 PMD 0 ",
    "[   32.993171] Oops: 0000 [#1] SMP ",
]
NEW = [
    "[ 4093.1] BUG: kernel NULL pointer dereference, address: 0000000000000008",
    "[ 4093.1] #PF: supervisor read access in kernel mode",
    "[ 4093.1] Oops: 0000 [#1] PREEMPT SMP NOPTI",
    "[ 4093.1] CPU: 12 PID: 5120 Comm: nvidia-smi Tainted: P           OE      6.8.0-45-generic",
    "[ 4093.1] RIP: 0010:uvm_va_space_destroy+0x5e/0x4d0 [nvidia_uvm]",
]
ARM = [
    "Unable to handle kernel NULL pointer dereference at virtual address 0000000000000010",
    "Mem abort info:",
    "pc : _nv000512rm+0x24/0x60 [nvidia]",
]


def test_fault_in_the_driver_module_is_the_drivers_crash() -> None:
    (oops,) = driver_oopses(OLD)
    assert (oops.header_no, oops.fault_no, oops.module) == (1, 2, "nvidia")
    (uvm,) = driver_oopses(NEW)
    assert (uvm.fault_no, uvm.module) == (5, "nvidia_uvm")
    assert len(driver_oopses(ARM)) == 1
    gpf = ["general protection fault, probably for non-canonical address 0xdead000000000122: 0000 [#1] SMP",
           "RIP: 0010:nv_drm_gem_free+0x1c/0x60 [nvidia_drm]"]
    assert driver_oopses(gpf)[0].module == "nvidia_drm"


def test_look_alikes_stay_silent() -> None:
    # the fault in a file system, NVIDIA modules only linked in
    zfs = [NEW[0], "Modules linked in: nvidia_uvm(POE) nvidia(POE) zfs(PO)",
           "RIP: 0010:zfs_znode_dmu_fini+0x12/0x30 [zfs]"]
    assert driver_oopses(zfs) == []
    # a user program's fault the kernel relays, in a driver library
    assert driver_oopses(["traps: python[4411] general protection fault ip:7f3a1c in "
                          "libnvidia-ml.so.550.54.15[7f3a00000+1f0000]"]) == []
    # a warning with an NVIDIA frame is no oops
    assert driver_oopses(["WARNING: CPU: 3 PID: 88 at drivers/gpu/drm/drm_atomic.c:12 x+0x1",
                          "RIP: 0010:nv_drm_atomic_commit+0x2a/0x90 [nvidia_drm]"]) == []
    # the faulting line belongs to the next report, whose header is read for it
    assert [o.header_no for o in driver_oopses([*zfs[:1], "---[ end trace 1 ]---", *NEW])] == [3]
