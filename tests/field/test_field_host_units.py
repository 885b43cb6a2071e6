"""The host's own services judged by systemd's lines in their journals (issue 20): a
kubelet or container runtime whose last run ended in failure, with no start, stop or new
run since, is down with its own last error as the reason; a restart that came back, a
stop on purpose and a run of the same journal's other unit stay for the other checks."""

from __future__ import annotations

from case import Case, synthetic_case
from scoreboard import top_pair

from gpunode.kb import load_kb

#: cri-o/cri-o#3776's shape: CRI-O exits at start on a value of its config.
CRIO_EXITS = (
    'May 17 23:07:00 localhost crio[1967]: time="2020-05-17 23:07:00.078367817-03:00" level=info '
    'msg="Using default capabilities: CAP_CHOWN, CAP_KILL"\n'
    'May 17 23:07:00 localhost crio[1967]: time="2020-05-17 23:07:00.079441070-03:00" level=fatal '
    'msg="Validating runtime config: conmon validation: invalid conmon path: stat /usr/libexec/crio/conmon: '
    'no such file or directory"\n'
    "May 17 23:07:00 localhost systemd[1]: crio.service: Main process exited, code=exited, "
    "status=1/FAILURE\n"
    "May 17 23:07:00 localhost systemd[1]: crio.service: Failed with result 'exit-code'.\n")

#: kubernetes/kubelet#9's shape: older systemd's lower-case and 'entered failed state' lines.
_KUBELET_EXITS_OLD_SYSTEMD = (
    "Apr 05 05:33:40 master systemd[1]: kubelet.service: main process exited, code=exited, "
    "status=255/n/a\n"
    "Apr 05 05:33:40 master kubelet[4759]: F0405 05:33:40.511159    4759 server.go:274] failed to run "
    'Kubelet: failed to create kubelet: misconfiguration: kubelet cgroup driver: "cgroupfs" is different '
    'from docker cgroup driver: "systemd"\n'
    "Apr 05 05:33:40 master systemd[1]: Unit kubelet.service entered failed state.\n"
    "Apr 05 05:33:40 master systemd[1]: kubelet.service failed.\n")

_RESTARTED = (
    "May 17 23:07:10 localhost systemd[1]: crio.service: Scheduled restart job, restart counter is at 1.\n"
    "May 17 23:07:10 localhost systemd[1]: Stopped Container Runtime Interface for OCI (CRI-O).\n"
    "May 17 23:07:10 localhost systemd[1]: Starting Container Runtime Interface for OCI (CRI-O)...\n"
    'May 17 23:07:11 localhost crio[2210]: time="2020-05-17 23:07:11.1-03:00" level=info '
    'msg="Started conmon"\n'
    "May 17 23:07:11 localhost systemd[1]: Started Container Runtime Interface for OCI (CRI-O).\n")


def _case(name: str, journal: str) -> Case:
    return synthetic_case("x-host-units", [{"kind": "node-cmd", "name": name, "text": journal}],
                          healthy=False)


def test_a_runtime_whose_unit_exits_on_its_config_is_down_with_its_fatal_line() -> None:
    found = top_pair(_case("journal-runtime.txt", CRIO_EXITS))
    assert found == ("container-runtime", "error_config_invalid")


def test_a_kubelet_whose_unit_failed_under_older_systemd_is_read_too() -> None:
    found = top_pair(_case("journal-kubelet.txt", _KUBELET_EXITS_OLD_SYSTEMD))
    assert found == ("kubelet", "error_config_invalid")


def test_a_runtime_restarted_since_its_failure_stays_healthy() -> None:
    assert top_pair(_case("journal-runtime.txt", CRIO_EXITS + _RESTARTED)) is None


def test_a_new_run_of_the_unit_without_systemd_s_lines_stays_healthy() -> None:
    # the journal cut to the unit's own lines after the exit: a new process id logs
    later = ('May 17 23:08:00 localhost crio[2210]: time="2020-05-17 23:08:00-03:00" level=info '
             'msg="Serving"\n')
    assert top_pair(_case("journal-runtime.txt", CRIO_EXITS + later)) is None


def test_a_unit_stopped_on_purpose_stays_healthy() -> None:
    stopped = ("May 17 23:06:00 localhost systemd[1]: Stopping Container Runtime Interface for OCI "
               "(CRI-O)...\n"
               "May 17 23:06:00 localhost systemd[1]: crio.service: Succeeded.\n"
               "May 17 23:06:00 localhost systemd[1]: Stopped Container Runtime Interface for OCI (CRI-O).\n")
    assert top_pair(_case("journal-runtime.txt", stopped)) is None


def test_a_kubelet_journal_of_error_lines_without_systemd_s_verdict_is_not_judged_so() -> None:
    # a running kubelet logs errors it goes on after: its last words decide nothing here
    running = ('Aug 02 03:25:06 master kubelet[22572]: E0802 03:25:06.874384   22572 file.go:104] '
               '"Unable to read config path" err="path does not exist, ignoring" '
               'path="/etc/kubernetes/manifests"\n')
    assert top_pair(_case("journal-kubelet.txt", running)) is None


def test_the_kubelet_refusing_its_configuration_and_a_config_validation_are_config_invalid() -> None:
    kb = load_kb()
    assert kb.class_of('failed to run Kubelet: misconfiguration: kubelet cgroup driver: "systemd" is '
                       'different from docker cgroup driver: "cgroupfs"') == "error_config_invalid"
    assert kb.class_of("Validating runtime config: conmon validation: invalid conmon path: stat "
                       "/usr/libexec/crio/conmon: no such file or directory") == "error_config_invalid"
    # look-alikes: a missing file without a validation step stays a file's state
    assert kb.class_of("failed to read kubelet config file \"/var/lib/kubelet/config.yaml\", error: open "
                       "/var/lib/kubelet/config.yaml: no such file or directory") == "error_file_state"
    assert kb.class_of("stat /usr/libexec/crio/conmon: no such file or directory") == "error_file_state"


#: aws-samples/eks-workshop-v2#447's kubelet journal: PLEG's relist past its threshold.
_PLEG_STALLED = (
    'Apr 13 10:53:52 ip-10-42-10-121 kubelet: E0413 10:53:52.844381    3263 kubelet.go:2055] "Skipping pod '
    'synchronization" err="PLEG is not healthy: pleg was last seen active 2h33m12.704970756s ago; threshold '
    'is 3m0s"\n')
#: What every kubelet start logs before its first relist, and PLEG's routine events.
_KUBELET_START = (
    'Jan 29 05:40:01 node kubelet[3736781]: E0129 05:40:01.100000 3736781 kubelet.go:2359] "Skipping pod '
    'synchronization" err="[container runtime status check may not have completed yet, PLEG is not healthy: '
    'pleg has yet to be successful]"\n'
    'Jan 29 05:42:59 node kubelet[3736781]: I0129 05:42:59.062040 3736781 kubelet.go:2155] "SyncLoop (PLEG): '
    'event for pod" pod="default/x" event=&{ID:1 Type:ContainerStarted Data:2}\n')


def test_the_kubelet_s_journal_saying_the_runtime_stalled_is_the_runtime_s_on_a_ready_node() -> None:
    found = top_pair(_case("journal-kubelet.txt", _PLEG_STALLED))
    assert found == ("container-runtime", "container_runtime_down")


def test_a_kubelet_start_s_own_pleg_words_stay_healthy() -> None:
    assert top_pair(_case("journal-kubelet.txt", _KUBELET_START)) is None
