"""A host service written in Go (the kubelet, containerd, CRI-O, dockerd) whose journal holds a
Go crash record followed by the goroutine trace the runtime prints as it ends the process
crashed of its own bug (issue 20): degraded with that line, though no systemd line says how
its run ended and though systemd restarted it since. A journal of ordinary errors the service
logs and goes on after stays healthy, as does a crash word quoted in a pod's error.

Sources: kubernetes/kubernetes#88779 (the kubelet's 'E0303 ... runtime.go:78] Observed a panic:
runtime.boundsError{...}' in its journal, every few seconds), #86676 (the goroutine trace after
it, in journalctl's prefix), kubernetes/kubeadm#1486 (the same line before 1.16, a file frame
after it instead of the goroutine header; its journal in a Chinese locale, shown here with the
month in English)."""

from __future__ import annotations

from typing import Any

import pytest
from case import synthetic_case
from scoreboard import top_pair

_JOURNAL = "Mar 03 19:17:52 kind-worker2 kubelet[670]: "

CRASHES = {
    "observed-panic": [
        f"{_JOURNAL}I0303 19:17:51.100000     670 kubelet.go:1846] \"SyncLoop UPDATE\" source=\"api\"",
        f"{_JOURNAL}E0303 19:17:52.219064     670 runtime.go:78] Observed a panic: runtime.boundsError"
        "{x:1, y:1, signed:true, code:0x0} (runtime error: index out of range [1] with length 1)",
        f"{_JOURNAL}goroutine 603 [running]:",
        f"{_JOURNAL}k8s.io/kubernetes/vendor/k8s.io/apimachinery/pkg/util/runtime.logPanic("
        "0x3a2dec0, 0x6d6df80)",
    ],
    "observed-panic-old-trace": [
        "Apr 03 09:26:35 k8snode1 kubelet[9519]: E0403 09:26:35.512103    9519 runtime.go:69] "
        "Observed a panic: "
        "\"invalid memory address or nil pointer dereference\" (runtime error: invalid memory address or nil "
        "pointer dereference)",
        "Apr 03 09:26:35 k8snode1 kubelet[9519]: /workspace/anago-v1.14.0-rc.1.5+641856db183520/src/k8s.io/"
        "kubernetes/_output/dockerized/go/src/k8s.io/kubernetes/vendor/k8s.io/apimachinery/pkg/util/runtime/"
        "runtime.go:76",
    ],
    "bare-unit-panic": [
        "kubelet[6048]: panic: assignment to entry in nil map",
        "kubelet[6048]: ",
        "kubelet[6048]: goroutine 443 [running]:",
        "kubelet[6048]: k8s.io/apimachinery/pkg/util/sets.Set[...].Insert(0xc007a80210?)",
    ],
    "fatal-error-then-restart": [
        f"{_JOURNAL}fatal error: concurrent map writes",
        f"{_JOURNAL}goroutine 2684 [running]:",
        f"{_JOURNAL}runtime.throw(0x434c2b8, 0x15)",
        "Mar 03 19:17:53 kind-worker2 systemd[1]: kubelet.service: Main process exited, code=exited, "
        "status=2/INVALIDARGUMENT",
        "Mar 03 19:18:03 kind-worker2 systemd[1]: Started kubelet: The Kubernetes Node Agent.",
        "Mar 03 19:18:03 kind-worker2 kubelet[88624]: I0303 19:18:03.100000   88624 server.go:416] "
        "\"Kubelet version\"",
    ],
}

#: kubernetes/kubernetes#135711: the kubelet logs the error it then panics with; that line says more.
LOGGED_BEFORE = [
    "E1211 06:14:57.688607  909635 status_manager.go:203] \"Could not initialize pod allocation checkpoint "
    "manager, please drain node and remove policy state file\" "
    "err=\"could not restore state from checkpoint: invalid character '\\\"' after top-level value\"",
    "panic: could not restore state from checkpoint: invalid character '\"' after top-level value",
    "",
    "goroutine 375 [running]:",
    "k8s.io/kubernetes/pkg/kubelet/status.(*manager).Start(0xc000b2c480)",
]

HEALTHY = {
    "ordinary-errors": [
        f"{_JOURNAL}E0303 19:17:52.219064     670 pod_workers.go:1298] \"Error syncing pod, skipping\" "
        "err=\"failed to \\\"StartContainer\\\" for \\\"app\\\" with CrashLoopBackOff\" "
        "pod=\"default/app-0\"",
        f"{_JOURNAL}E0303 19:17:53.000000     670 remote_runtime.go:334] "
        "\"ContainerStatus from runtime service failed\" "
        "err=\"rpc error: code = NotFound desc = an error occurred when try to find container\"",
    ],
    "quoted-panic": [
        f"{_JOURNAL}E0303 19:17:52.219064     670 pod_workers.go:1298] \"Error syncing pod\" "
        "err=\"back-off restarting failed container: panic: runtime error: nil map\" pod=\"default/app-0\"",
        f"{_JOURNAL}I0303 19:17:53.000000     670 kubelet.go:2400] \"SyncLoop (PLEG): event for pod\"",
    ],
    "panic-word-no-trace": [
        f"{_JOURNAL}panic: the plugin's output was cut",
        f"{_JOURNAL}I0303 19:17:53.000000     670 kubelet.go:2400] \"SyncLoop (PLEG): event for pod\"",
    ],
}


def _case(name: str, lines: list[str], healthy: bool, journal: str = "journal-kubelet.txt") -> Any:
    evidence = [{"kind": "node-cmd", "name": journal, "text": "\n".join(lines) + "\n"}]
    return synthetic_case(f"host-crash-{name}", evidence, healthy=healthy)


@pytest.mark.parametrize("name", sorted(CRASHES))
def test_go_crash_in_the_kubelet_journal_is_its_own(name: str) -> None:
    pair = top_pair(_case(name, CRASHES[name], healthy=False))
    assert pair is not None and pair[0] == "kubelet", pair


@pytest.mark.parametrize("name", sorted(HEALTHY))
def test_errors_it_goes_on_after_stay_healthy(name: str) -> None:
    assert top_pair(_case(name, HEALTHY[name], healthy=True)) is None


def test_the_runtime_journal_is_read_the_same() -> None:
    """containerd is a Go service too: the same record in its journal is its crash."""
    lines = [line.replace("kubelet[6048]", "containerd[912]") for line in CRASHES["bare-unit-panic"]]
    pair = top_pair(_case("containerd", lines, healthy=False, journal="journal-runtime.txt"))
    assert pair is not None and pair[0] == "container-runtime", pair


def test_the_error_logged_before_the_panic_is_the_line() -> None:
    pair = top_pair(_case("logged-before", LOGGED_BEFORE, healthy=False))
    assert pair == ("kubelet", "error_config_invalid")
