"""The kernel's OOM kill or security denial of a stack process is that component's recent
past (gpunode.checks.kernel_kills): lines in the kernel's own formats, as public reports
quote them, with the process swapped where the report's was no stack process; and their
look-alikes that must change nothing (a user's process, an old kill, a denial only
reported)."""

from __future__ import annotations

import msgspec
import pytest
from case import Case
from scoreboard import top_pair

from gpunode.catalog import load_catalog
from gpunode.checks.kernel_kills import kernel_hits
from gpunode.processes import parse_processes, process_owners


def _case(text: str) -> Case:
    raw = {"id": "x-kernel-kills", "source": "https://example.org/x", "title": "t", "platform": "generic",
           "evidence": [{"kind": "node-cmd", "name": "dmesg.txt", "text": text}],
           "expect": {"healthy": False}}
    return msgspec.convert(raw, Case)


#: reportportal/kubernetes#203: a memory cgroup kill since Linux 4.19 (uwsgi there).
CGROUP_KILL = ("[ 7063.247407] Memory cgroup out of memory: Killed process 63214 ({comm}) "
               "total-vm:3149468kB, anon-rss:164992kB, file-rss:52176kB, shmem-rss:92kB, UID:0 "
               "pgtables:1372kB oom_score_adj:986\n"
               "[ 7063.263325] oom_reaper: reaped process 63214 ({comm}), now anon-rss:0kB, "
               "file-rss:0kB, shmem-rss:92kB\n")
#: The one-line summary the OOM killer prints before the kill since Linux 5.0.
SUMMARY = ("[ 9120.500100] oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=cri-containerd-"
           "4f1c.scope,mems_allowed=0,oom_memcg=/kubepods.slice/kubepods-burstable.slice,task_memcg="
           "/kubepods.slice/kubepods-burstable.slice/cri-containerd-4f1c.scope,task={comm},pid=41822,uid=0\n")
#: docker/for-linux#1001: before 4.19 the victim is chosen on one line and killed on the next.
OLD_KILL = ("[  152.821448] Memory cgroup out of memory: Kill process 4142 ({comm}) score 68 or "
            "sacrifice child\n"
            "[  152.823388] Killed process 4142 ({comm}) total-vm:11968kB, anon-rss:4288kB, "
            "file-rss:3972kB, shmem-rss:0kB\n")
#: vetter/shoc#38: the node's own OOM killer before 4.19 (DeviceMemory there); since 4.19 the
#: kill line reads "Out of memory: Killed process ...".
NODE_KILL = ("[   80.743300] Out of memory: Kill process 2700 ({comm}) score 1 or sacrifice child\n"
             "[   80.751793] Killed process 2700 ({comm}) total-vm:1838376kB, anon-rss:2632kB, "
             "file-rss:628kB\n")
NODE_KILL_NEW = ("[ 8812.102938] Out of memory: Killed process 1187 ({comm}) total-vm:6242772kB, "
                 "anon-rss:3904456kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:9136kB "
                 "oom_score_adj:-999\n")
#: pdbear/syno_nvidia_gpu_driver#18 and Syllo/nvtop#182: AppArmor's enforce-mode denial.
APPARMOR = ('[  651.640415] audit: type=1400 audit(1716191113.203:186): apparmor="{verdict}" '
            'operation="open" profile="cri-containerd.apparmor.d" name="/dev/nvidiactl" pid=17728 '
            'comm="{comm}" requested_mask="wr" denied_mask="wr" fsuid=0 ouid=0\n')
#: An SELinux AVC denial of a device node (the toolkit's troubleshooting guide's form).
AVC = ('[  812.004113] audit: type=1400 audit(1716191300.120:201): avc:  denied  {{ read write }} for  '
       'pid=9121 comm="{comm}" name="nvidiactl" dev="devtmpfs" ino=1193 '
       'scontext=system_u:system_r:container_t:s0:c3,c9 '
       'tcontext=system_u:object_r:xserver_misc_device_t:s0 tclass=chr_file permissive={permissive}\n')


@pytest.mark.parametrize(("text", "expected"), [
    (CGROUP_KILL.format(comm="nv-hostengine"), ("dcgm-exporter", "oom_killed")),
    (SUMMARY.format(comm="dcgm-exporter"), ("dcgm-exporter", "oom_killed")),
    (OLD_KILL.format(comm="nvidia-device-p"), ("device-plugin", "oom_killed")),
    (NODE_KILL.format(comm="containerd"), ("container-runtime", "error_resource_exhausted")),
    (NODE_KILL_NEW.format(comm="kubelet"), ("kubelet", "error_resource_exhausted")),
    (APPARMOR.format(verdict="DENIED", comm="nvidia-device-p"), ("device-plugin", "error_permission_denied")),
    (AVC.format(comm="nv-hostengine", permissive=0), ("dcgm-exporter", "error_permission_denied")),
])
def test_a_stack_process_killed_or_refused_degrades_its_component(text: str,
                                                                  expected: tuple[str, str]) -> None:
    assert top_pair(_case(text)) == expected

#: A line more than an hour of uptime after the kill.
LATER = "[19999.000000] IPv6: ADDRCONF(NETDEV_CHANGE): eth0: link becomes ready\n"


@pytest.mark.parametrize("text", [
    CGROUP_KILL.format(comm="uwsgi"),  # the report's own process: no stack component runs it
    OLD_KILL.format(comm="ruby2.3"),  # logzio/logzio-k8s#8: fluentd runs as ruby, as do users' jobs
    SUMMARY.format(comm="python3"),
    APPARMOR.format(verdict="ALLOWED", comm="nvidia-device-p"),  # complain mode
    APPARMOR.format(verdict="DENIED", comm="process-exporte"),  # NVIDIA/gpu-operator#279
    AVC.format(comm="nv-hostengine", permissive=1),
    # NVIDIA/DCGM#155: AppArmor in complain mode on a DCGM node, as the journal keeps it
    'Feb 28 16:24:13 gx01 kernel: [103481.804767] audit: type=1400 audit(1709133853.811:1092): '
    'apparmor="ALLOWED" operation="open" profile="/usr/sbin/sssd" name="/proc/1282016/cmdline" '
    'pid=27038 comm="nv-hostengine" requested_mask="r" denied_mask="r" fsuid=0 ouid=0\n',
    # a kill long before the log's end: the node's distant past
    CGROUP_KILL.format(comm="nv-hostengine") + LATER,
])
def test_look_alikes_change_nothing(text: str) -> None:
    assert kernel_hits(text, process_owners()) == {}


def test_a_kill_in_the_last_hour_of_the_log_counts() -> None:
    text = CGROUP_KILL.format(comm="fluent-bit") + "[ 9000.000000] IPv6: link becomes ready\n"
    found = kernel_hits(text, process_owners())
    assert {k: v[2] for k, v in found.items()} == {"logging-agent": "oom_killed"}


def test_names_are_matched_on_the_kernel_s_15_character_cut() -> None:
    owners = process_owners()
    assert owners["nvidia-device-p"] == "device-plugin"
    assert owners["gpu-feature-dis"] == "gfd"
    assert all(len(comm) <= 15 for comm in owners)


def test_the_table_refuses_cuts_that_name_two_components() -> None:
    text = ('[[process]]\nname = "nvidia-container-cli"\ncomponent = "container-toolkit"\nsource = "a"\n'
            '[[process]]\nname = "nvidia-containerX"\ncomponent = "driver"\nsource = "b"\n')
    with pytest.raises(ValueError, match="two components"):
        parse_processes(text, frozenset({"container-toolkit", "driver"}))
    with pytest.raises(ValueError, match="unknown component"):
        parse_processes(text.replace("driver", "nope"), frozenset({"container-toolkit", "driver"}))




def test_dmesg_clock_stamps_date_a_kill_as_well() -> None:
    # NVIDIA/dcgm-exporter#84 quotes dmesg -T: wall-clock stamps, not uptime
    kill = ("[Mon Jul 25 {hour}:05:00 2022] Memory cgroup out of memory: Killed process 8121 "
            "(dcgm-exporter) total-vm:2402112kB, anon-rss:524288kB, file-rss:0kB, shmem-rss:0kB\n")
    later = "[Mon Jul 25 16:46:04 2022] NVRM: GPU Board Serial Number: 1565020013641\n"
    assert kernel_hits(kill.format(hour="14") + later, process_owners()) == {}
    found = kernel_hits(kill.format(hour="16") + later, process_owners())
    assert {k: v[2] for k, v in found.items()} == {"dcgm-exporter": "oom_killed"}


#: A global OOM kill of containerd as the kernel prints it (the summary then the kill line),
#: quoted in the LKML review of Feng Tang's 2021 cpuset patch (a docker cpuset bound to
#: movable-only memory nodes).
GLOBAL_CONTAINERD = (
    "oom-kill:constraint=CONSTRAINT_CPUSET,nodemask=(null),cpuset=docker-9976a269caec812c134fa317f27487ee"
    "36e1129beba7278a463dd53e5fb9997b.scope,mems_allowed=4,global_oom,task_memcg=/system.slice/"
    "containerd.service,task=containerd,pid=4100,uid=0\n"
    "Out of memory: Killed process 4100 (containerd) total-vm:4077036kB, anon-rss:51184kB, "
    "file-rss:26016kB, shmem-rss:0kB, UID:0 pgtables:676kB oom_score_adj:0\n"
    "oom_reaper: reaped process 8248 (docker), now anon-rss:0kB, file-rss:0kB, shmem-rss:0kB\n")


def test_a_real_global_kill_of_the_runtime_is_the_node_out_of_memory() -> None:
    assert top_pair(_case(GLOBAL_CONTAINERD)) == ("container-runtime", "error_resource_exhausted")
    # its summary line alone says the same
    summary = GLOBAL_CONTAINERD.splitlines()[0]
    assert kernel_hits(summary, process_owners())["container-runtime"][2] == "error_resource_exhausted"


def test_dmesg_clock_stamps_with_a_padded_day() -> None:
    # a node's dmesg -T during a global OOM: the day of the month padded with a space
    text = ("[Sat May  9 10:34:49 2026] Out of memory: Killed process 963 (containerd) total-vm:1561184kB, "
            "anon-rss:51596kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:760kB oom_score_adj:0\n"
            "[Sat May  9 12:00:00 2026] IPv6: ADDRCONF(NETDEV_CHANGE): eth0: link becomes ready\n")
    assert kernel_hits(text, process_owners()) == {}
    alone = kernel_hits(text.splitlines()[0], process_owners())
    assert alone["container-runtime"][2] == "error_resource_exhausted"


#: NVIDIA/gpu-operator#553: SELinux enforcing refuses the driver container's modprobe the
#: module it built (as the kernel log holds an AVC where auditd does not take it).
MODULE_LOAD = ("[ 5521.100213] audit: type=1400 audit(1691186980.587:9501): avc:  denied  "
               "{ module_load } for  pid=2431660 comm=\"modprobe\" path=\"/usr/lib/modules/"
               "4.18.0-477.15.1.el8_8.x86_64/kernel/drivers/video/nvidia.ko\" dev=\"overlay\" "
               "ino=1678053642 scontext=system_u:system_r:unconfined_service_t:s0 "
               "tcontext=system_u:object_r:var_lib_t:s0 tclass=system permissive=0\n")
#: NVIDIA/libnvidia-container#126: a GPU pod's nvidia-smi refused the driver's /proc files.
POD_READ = ('[ 6012.004417] audit: type=1400 audit(1611137309.671:5406): avc:  denied  { read } for  '
            'pid=2077683 comm="nvidia-smi" name="params" dev="tmpfs" ino=109069010 '
            'scontext=system_u:system_r:container_t:s0:c10,c25 '
            'tcontext=system_u:object_r:container_runtime_tmpfs_t:s0 tclass=file permissive=0\n')


def test_a_refused_module_load_is_the_component_its_path_names() -> None:
    # modprobe runs for any module: the module's path names the driver, whose catalogued
    # cause for this line then names it
    assert top_pair(_case(MODULE_LOAD)) == ("driver", "selinux_blocks_module_load")


def test_modprobe_refused_another_module_is_not_the_stack_s() -> None:
    named_in = load_catalog().named_in
    assert kernel_hits(MODULE_LOAD.replace("video/nvidia.ko", "net/wireguard.ko"),
                       process_owners(), named_in) == {}
    # nor is the pod's nvidia-smi refused the driver's /proc files the driver's own
    assert "driver" not in kernel_hits(POD_READ, process_owners(), named_in)


def test_a_gpu_program_refused_what_nvidia_s_hook_mounted_is_the_toolkit_s() -> None:
    # NVIDIA/libnvidia-container#126: the tmpfs the hook mounts over /proc/driver/nvidia carries
    # the runtime's SELinux type, which the container's domain may not read
    assert top_pair(_case(POD_READ)) == ("container-toolkit", "error_permission_denied")


#: containers/container-selinux#73: systemd (init_t) refused podman's own tmpfs on the host.
HOST_READ = ('type=AVC msg=audit(1562587793.241:215): avc:  denied  { read } for  pid=8208 '
             'comm="systemd-user-ru" name="libpod" dev="tmpfs" ino=73106 '
             'scontext=system_u:system_r:init_t:s0 '
             'tcontext=unconfined_u:object_r:container_runtime_tmpfs_t:s0 tclass=dir permissive=0\n')
#: containers/podman#18497: a container's vainfo refused the host's render node (its device type).
DRI_MAP = ('type=AVC msg=audit(1683468487.052:3337): avc:  denied  { map } for  pid=699282 comm="vainfo" '
           'path="/dev/dri/renderD128" dev="devtmpfs" ino=947 '
           'scontext=system_u:system_r:container_t:s0:c260,c628 '
           'tcontext=system_u:object_r:dri_device_t:s0 tclass=chr_file permissive=0\n')


@pytest.mark.parametrize("text", [
    HOST_READ,  # not a container's process
    DRI_MAP,  # not an object the runtime made
    POD_READ.replace("permissive=0", "permissive=1"),  # only reported
    POD_READ.replace('comm="nvidia-smi" name="params"', 'comm="python3" name="shm"'),  # not NVIDIA's
])
def test_denials_of_objects_nvidia_s_hook_did_not_make_are_not_the_toolkit_s(text: str) -> None:
    assert "container-toolkit" not in kernel_hits(text, process_owners(), load_catalog().named_in)
