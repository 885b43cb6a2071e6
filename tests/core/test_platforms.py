"""Platform profiles: validated data, and detection from a node's labels and nodeInfo
as each platform really sets them (the shapes the field builder gives its nodes)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from gpunode.errors import BundleError
from gpunode.platforms import GENERIC, detect, load_platforms, parse_platforms

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "field"))
from platforms import SHAPES


@pytest.mark.parametrize("name", sorted(set(SHAPES) - {"ubuntu", "generic", "rhel"}))
def test_platform_detected_from_its_node_shape(name: str) -> None:
    shape = SHAPES[name]
    info = shape.node_info
    found = detect(
        shape.labels,
        info.get("kubeletVersion", "v1.31.4"),
        info.get("osImage", "Ubuntu 22.04.5 LTS"),
        info.get("containerRuntimeVersion", "containerd://1.7.24"),
    )
    assert found.id == name


def test_plain_node_is_generic() -> None:
    assert (
        detect({"kubernetes.io/os": "linux"}, "v1.31.4", "Ubuntu 22.04.5 LTS", "containerd://1.7.24")
        is GENERIC
    )


def test_gke_provides_driver_and_plugin_and_has_no_toolkit() -> None:
    gke = next(p for p in load_platforms() if p.id == "gke")
    assert {"driver", "device-plugin"} <= set(gke.provides)
    assert "container-toolkit" in gke.not_used


def test_unknown_component_is_a_one_line_error() -> None:
    text = '[[platform]]\nid = "x"\ntitle = "X"\nlabels = ["a"]\nprovides = ["warp-drive"]\n'
    with pytest.raises(BundleError, match=r"platform 'x': unknown components \['warp-drive'\]"):
        parse_platforms(text)


def test_profile_without_detection_rule_is_rejected() -> None:
    with pytest.raises(BundleError, match="no detection rule"):
        parse_platforms('[[platform]]\nid = "x"\ntitle = "X"\n')
