"""The collector's read of the host's IMEX (cmd/imex.txt, collect/targets.py IMEX_READ)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from gpunode.collect.targets import IMEX_READ
from gpunode.parse.imex import HOST_HIDDEN, parse_imex_state

HOST_GUARD = "[ -d /proc/1/root/etc ] && ! [ /proc/1/root -ef / ] && cd /proc/1/root"


def _host_root(tmp_path: Path, *, nodes: str | None, channel: bool, running: bool) -> Path:
    """A host root laid out as the nvidia-imex package and a configured domain leave it."""
    root = tmp_path / "host"
    for unit in ("lib/systemd/system", "etc/systemd/system/multi-user.target.wants"):
        (root / unit).mkdir(parents=True)
        (root / unit / "nvidia-imex.service").write_text("[Unit]\n")
    (root / "etc/nvidia-imex").mkdir(parents=True)
    if nodes is not None:
        (root / "etc/nvidia-imex/nodes_config.cfg").write_text(nodes)
    (root / "dev/nvidia-caps-imex-channels").mkdir(parents=True)
    if channel:
        (root / "dev/nvidia-caps-imex-channels/channel0").write_text("")
    for pid, comm in ((1, "systemd"), (4211, "nvidia-imex" if running else "sshd")):
        (root / f"proc/{pid}").mkdir(parents=True)
        (root / f"proc/{pid}/comm").write_text(comm + "\n")
    return root


def _read(root: Path) -> str:
    """IMEX_READ run by sh with the host root at ``root`` instead of /proc/1/root."""
    assert HOST_GUARD in IMEX_READ
    script = IMEX_READ.replace(HOST_GUARD, f"cd {root}")
    return subprocess.run(["sh", "-c", script], capture_output=True, text=True, check=True).stdout


def test_a_configured_running_domain_member(tmp_path: Path) -> None:
    root = _host_root(tmp_path, nodes="10.114.228.11\n10.114.228.12\n", channel=True, running=True)
    state = parse_imex_state(_read(root))
    assert state is not None
    assert state.nodes_config == "/etc/nvidia-imex/nodes_config.cfg"
    assert state.peers == ("10.114.228.11", "10.114.228.12")
    assert state.channels == ("channel0",) and state.running and state.enabled and state.installed


def test_an_empty_node_list_and_a_stopped_daemon(tmp_path: Path) -> None:
    root = _host_root(tmp_path, nodes="", channel=False, running=False)
    state = parse_imex_state(_read(root))
    assert state is not None and state.nodes_config is not None
    assert (state.peers, state.channels, state.running) == ((), (), False)


def test_no_node_list_at_all(tmp_path: Path) -> None:
    state = parse_imex_state(_read(_host_root(tmp_path, nodes=None, channel=True, running=True)))
    assert state is not None and state.nodes_config is None and state.running


def test_ipv6_peers_and_comments() -> None:
    text = ("etc/nvidia-imex/nodes_config.cfg\n"
            "etc/nvidia-imex/nodes_config.cfg:# the domain's nodes\n"
            "etc/nvidia-imex/nodes_config.cfg:fd00::11\n")
    state = parse_imex_state(text)
    assert state is not None and state.peers == ("fd00::11",) and not state.running


def test_a_container_that_does_not_see_the_host_knows_nothing() -> None:
    out = subprocess.run(["sh", "-c", IMEX_READ], capture_output=True, text=True, check=True).stdout
    assert out.startswith(HOST_HIDDEN)  # here PID 1's root is the test's own root
    assert parse_imex_state(out) is None
    assert parse_imex_state("") is not None  # a host without IMEX: nothing there, known


def test_an_agents_probe_facts_stand_in_for_the_read() -> None:
    """Where a gpunode agent's probe facts are folded in, IMEX is judged from them: the read
    is not run (collect only what is read)."""
    from gpunode.collect.agents import supplied
    from gpunode.collect.plan import ExecTarget

    target = ExecTarget("gpu-a", "gpu-operator", "nvidia-driver-daemonset-x", "nvidia-driver-ctr",
                        ("sh", "-c", IMEX_READ), "nodes/gpu-a/cmd/imex.txt")
    assert supplied(target, frozenset({"cmd/gpunode-probe.json"}))
    assert not supplied(target, frozenset({"files/proc/modules"}))
