"""The container runtime's own configuration that does not parse in its format (issue 20):
daemon.json that is not JSON, a containerd config that is not TOML, on a node whose kubelet
reports the runtime down, is the runtime's error_config_invalid naming the file and position;
the same file beside a runtime that runs says nothing (the bundle's copy may be damaged), and a
file that parses, and a Go template k3s renders, stay healthy."""

from __future__ import annotations

from pathlib import Path

from case import Case, synthetic_case
from scoreboard import top_pair

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"

#: NVIDIA/nvidia-docker#1420's shape: nvidia-docker2 merged its runtime after an entry that
#: lacks its comma.
_MISSING_COMMA = """{
    "dns" : ["172.17.0.1"]
    "runtimes": {
        "nvidia": {
            "path": "nvidia-container-runtime",
            "runtimeArgs": []
        }
    }
}
"""


#: The kubelet's Ready=False message while the runtime is down.
_RUNTIME_DOWN = {"kind": "node-condition", "type": "Ready", "status": "False", "reason": "KubeletNotReady",
                 "message": "container runtime is down, PLEG is not healthy: pleg was last seen active "
                            "3m5s ago; threshold is 3m0s"}


def _docker(text: str, *, down: bool = True) -> Case:
    evidence = [{"kind": "node-file", "path": "etc/docker/daemon.json", "text": text}]
    return synthetic_case("x-runtime-config", evidence + ([_RUNTIME_DOWN] if down else []),
                          platform="docker", healthy=False)


def test_a_daemon_json_that_is_not_json_is_the_runtime_s_invalid_config() -> None:
    assert top_pair(_docker(_MISSING_COMMA)) == ("container-runtime", "error_config_invalid")


def test_the_same_file_beside_a_runtime_that_runs_says_nothing() -> None:
    assert top_pair(_docker(_MISSING_COMMA, down=False)) is None


def test_a_real_daemon_json_that_parses_stays_healthy() -> None:
    real = (REAL / "docker" / "aks-nvidia-docker-daemon.json").read_text()
    assert top_pair(_docker(real, down=False)) is None


def test_a_containerd_config_that_is_not_toml_is_the_runtime_s_invalid_config() -> None:
    broken = ('version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd]\n'
              '  default_runtime_name = "nvidia\n')
    case = synthetic_case("x-runtime-config", [{"kind": "node-file", "path": "etc/containerd/config.toml",
                                                "text": broken}, _RUNTIME_DOWN], healthy=False)
    assert top_pair(case) == ("container-runtime", "error_config_invalid")
