"""nvidia-ctk's own word of where it wrote its containerd drop-in, read against the imports of
the config containerd reads: a drop-in folder no import covers is never loaded
(containerd_config_wrong_path, layer2.toml; the check toolkit_dropin_not_imported).

Source: NVIDIA/nvidia-container-toolkit#1404 (toolkit 1.18.0 wrote
/etc/containerd/config.d/99-nvidia.toml while containerd's drop-ins live in conf.d/), fixed by
#1407. Look-alikes: the same line naming conf.d/, which the node's config imports, and one
naming the root config.toml, stay healthy."""

from __future__ import annotations

from case import synthetic_case
from scoreboard import top_pair

HEAD = """\
NVIDIA Container Toolkit CLI version 1.18.0
INFO[0000] Using config version 2
INFO[0000] Using CRI runtime plugin name "io.containerd.grpc.v1.cri"
"""
TAIL = "INFO[0000] It is recommended that containerd daemon be restarted.\n"


def _node(case_id: str, path: str) -> tuple[str, str] | None:
    text = HEAD + f"INFO[0000] Wrote updated config to {path}\n" + TAIL
    case = synthetic_case(case_id, [{"kind": "node-cmd", "name": "journal-runtime.txt", "text": text}],
                          cluster={"driver_mode": "host"})
    return top_pair(case)


def test_a_dropin_in_a_folder_containerd_does_not_import_is_the_wrong_path() -> None:
    assert _node("x-dropin-config-d", "/etc/containerd/config.d/99-nvidia.toml") == (
        "container-toolkit", "containerd_config_wrong_path")


def test_a_dropin_the_config_imports_and_the_root_config_stay_healthy() -> None:
    assert _node("x-dropin-conf-d", "/etc/containerd/conf.d/99-nvidia.toml") is None
    assert _node("x-dropin-root", "/etc/containerd/config.toml") is None
