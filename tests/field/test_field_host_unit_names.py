"""systemd's line names the unit whose run ended: in a host service's journal pasted without
``-u`` (every unit's lines), another unit exiting non-zero (etcd.service, which kubespray runs
with ``docker run``) is that unit's failure, not the container runtime's or the kubelet's.
Older systemd's 'Failed to start <description>.' names no unit and is the named line's just
before it. The service's own units (containerd, crio, docker, kubelet and the distributions'
k3s, rke2, microk8s units) stay read as before (tests/field/test_field_host_units.py)."""

from __future__ import annotations

import pytest
from case import Case, synthetic_case
from scoreboard import top_pair

#: the runtime's own end (cri-o/cri-o#3776's shape)
from test_field_host_units import CRIO_EXITS

from gpunode.checks.unit_journal import other_unit

#: Another unit's end, older systemd (liuyi01/kubernetes-starter#10, verbatim):
#: https://github.com/liuyi01/kubernetes-starter/issues/10
_ETCD_OLD = (
    "Jul 11 15:57:25 test-server-02 systemd[1]: Starting Etcd Server...\n"
    "Jul 11 15:57:25 test-server-02 systemd[1]: etcd.service: main process exited, code=exited, "
    "status=203/EXEC\n"
    "Jul 11 15:57:25 test-server-02 systemd[1]: Failed to start Etcd Server.\n"
    "Jul 11 15:57:25 test-server-02 systemd[1]: Unit etcd.service entered failed state.\n"
    "Jul 11 15:57:25 test-server-02 systemd[1]: etcd.service failed.\n")
#: ... and newer systemd, which names the unit in 'Failed to start' too
#: (kelseyhightower/kubernetes-the-hard-way#833, the two lines the report shows whole):
#: https://github.com/kelseyhightower/kubernetes-the-hard-way/issues/833
_ETCD_NEW = (
    "Jan 22 14:19:55 server systemd[1]: etcd.service: Failed with result 'exit-code'.\n"
    "Jan 22 14:19:55 server systemd[1]: Failed to start etcd.service - etcd.\n")



def _case(name: str, journal: str) -> Case:
    return synthetic_case("x-host-unit-names", [{"kind": "node-cmd", "name": name, "text": journal}],
                          healthy=False)


@pytest.mark.parametrize("journal", [_ETCD_OLD, _ETCD_NEW])
@pytest.mark.parametrize("name", ["journal-runtime.txt", "journal-kubelet.txt"])
def test_another_unit_s_end_in_a_host_journal_is_not_the_service_s(name: str, journal: str) -> None:
    top = top_pair(_case(name, journal))
    assert top is None or top[0] not in ("container-runtime", "kubelet")


def test_the_runtime_s_own_end_after_another_unit_s_is_still_read() -> None:
    # look-alike: the same journal, then the runtime's own unit exits on its config
    found = top_pair(_case("journal-runtime.txt", _ETCD_OLD + CRIO_EXITS))
    assert found == ("container-runtime", "error_config_invalid")


_RUNTIME, _KUBELET = "container-runtime", "kubelet"


@pytest.mark.parametrize(("line", "component", "other"), [
    ("Jul 11 15:57:25 test-server-02 systemd[1]: Unit etcd.service entered failed state.", _RUNTIME, True),
    ("Jan 22 14:19:55 server systemd[1]: Failed to start etcd.service - etcd.", _KUBELET, True),
    ("May 17 23:07:00 localhost systemd[1]: crio.service: Failed with result 'exit-code'.", _RUNTIME, False),
    ("Apr 05 05:33:40 master systemd[1]: Unit kubelet.service entered failed state.", _KUBELET, False),
    # a distribution's unit that runs the kubelet (a shape, not a report's line)
    ("Sep 13 14:08:25 rke2 systemd[1]: rke2-server.service: Main process exited, code=exited, "
     "status=1/FAILURE", _KUBELET, False),
    ("Jul 11 15:57:25 test-server-02 systemd[1]: Failed to start Etcd Server.", _KUBELET, None),
])
def test_the_unit_a_line_names(line: str, component: str, other: bool | None) -> None:
    assert other_unit(line, component) is other
