"""The reported driver version of a case's node (``cluster.gpu_node.driver_version``).

The simulator renders every node with one driver (``DRIVER_VERSION`` / ``CUDA_VERSION``). A case
whose report names another driver gets it, and the CUDA version that driver reports, everywhere
a collector reads the node's driver: nvidia-smi's table and XML, GFD's ``nvidia.com/cuda.*``
labels, /proc/driver/nvidia/version, the kernel log's NVRM banner, DCGM's driver field and the
tag of the node's driver container image. Evidence the case gives itself is laid over after.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from gpunode.sim.models import CUDA_VERSION, DRIVER_VERSION
from gpunode.sim.world import NodeState, World

#: Highest CUDA version each driver branch supports, as its nvidia-smi prints it ("CUDA
#: Version"): NVIDIA's CUDA Toolkit Release Notes, table "CUDA Toolkit and Corresponding
#: Driver Versions" (the toolkit that first requires the branch). 565, which no toolkit
#: requires, reports 12.7. A branch not listed needs ``cuda_version`` in the case.
CUDA_OF_BRANCH = {
    450: "11.0", 455: "11.1", 460: "11.2", 465: "11.3", 470: "11.4", 495: "11.5",
    510: "11.6", 515: "11.7", 520: "11.8", 525: "12.0", 530: "12.1", 535: "12.2",
    545: "12.3", 550: "12.4", 555: "12.5", 560: "12.6", 565: "12.7", 570: "12.8",
    575: "12.9", 580: "13.0",
}

#: A Linux driver release as nvidia-smi prints it: branch.minor[.patch] ("535.183.01", "570.86").
DRIVER_RE = re.compile(r"[1-9]\d{2}\.\d{1,3}(?:\.\d{1,3})?")
#: A CUDA version as nvidia-smi prints it ("12.2").
CUDA_RE = re.compile(r"\d{1,2}\.\d{1,2}")

_DRIVER_IMAGE = "nvcr.io/nvidia/driver:"


def driver_problem(driver: str | None, cuda: str | None) -> str | None:
    """Why a case's driver_version / cuda_version pair cannot be built (the field, then the
    reason), or None when it can."""
    if driver is None:
        return "cuda_version: needs driver_version" if cuda is not None else None
    if not DRIVER_RE.fullmatch(driver):
        return f"driver_version: {driver!r} is not a driver release like '535.183.01'"
    if cuda is not None and not CUDA_RE.fullmatch(cuda):
        return f"cuda_version: {cuda!r} is not a CUDA version like '12.2'"
    branch = driver.split(".", 1)[0]
    if cuda is None and int(branch) not in CUDA_OF_BRANCH:
        return f"cuda_version: driver branch {branch} is not in the table; give cuda_version"
    return None


def cuda_of(driver: str, cuda: str | None) -> str:
    """The CUDA version the node's nvidia-smi reports: the case's, else its driver branch's."""
    return cuda if cuda is not None else CUDA_OF_BRANCH[int(driver.split(".", 1)[0])]


def _parts(version: str, width: int) -> list[str]:
    parts = version.split(".")
    return parts + [""] * (width - len(parts))


def relabel(world: World, node: NodeState, version: tuple[str, str] | None) -> None:
    """GFD's driver and CUDA labels and the node's driver container image name the case's
    (driver, CUDA) ``version``; None leaves the simulator's."""
    if version is None:
        return
    driver, cuda = version
    keys = {"driver-version.": ("full", "major", "minor", "revision"), "driver.": ("major", "minor", "rev")}
    major, minor, rev = _parts(driver, 3)
    values = {"full": driver, "major": major, "minor": minor, "revision": rev, "rev": rev}
    for group, fields in keys.items():
        for field in fields:
            key = f"nvidia.com/cuda.{group}{field}"
            if key in node.labels:
                node.labels[key] = values[field]
    cmaj, cmin = _parts(cuda, 2)
    runtime = {"runtime-version.full": cuda, "runtime-version.major": cmaj, "runtime-version.minor": cmin,
               "runtime.major": cmaj, "runtime.minor": cmin}
    for suffix, value in runtime.items():
        key = f"nvidia.com/cuda.{suffix}"
        if key in node.labels:
            node.labels[key] = value
    for pod in world.pods.values():
        if pod.get("spec", {}).get("nodeName") == node.name:
            _retag(pod["spec"], driver)


def _retag(spec: dict[str, Any], driver: str) -> None:
    old = f"{_DRIVER_IMAGE}{DRIVER_VERSION}-"
    for ctr in [*spec.get("initContainers", []), *spec.get("containers", [])]:
        image = ctr.get("image", "")
        if image.startswith(old):
            ctr["image"] = f"{_DRIVER_IMAGE}{driver}-{image[len(old):]}"


def relog(world: World, node: NodeState, version: tuple[str, str] | None, given: set[str]) -> None:
    """The simulated logs of the node's pods (the driver's installer, the validators' nvidia-smi)
    name the case's ``version``; lines the case gives (``given``) stay as reported."""
    if version is None:
        return
    driver, cuda = version
    pods = [key for key, pod in world.pods.items() if pod.get("spec", {}).get("nodeName") == node.name]
    for key in [k for k in world.logs if any(k.startswith(f"{p}/") for p in pods)]:
        lines = world.logs[key].split("\n")
        world.logs[key] = "\n".join(line if line in given else _renamed(line, driver, cuda) for line in lines)


def rewrite_files(root: Path, version: tuple[str, str] | None) -> None:
    """The node's written driver facts (``root`` = nodes/<node>) name the case's ``version``."""
    if version is None:
        return
    driver, cuda = version
    for rel in ("cmd/nvidia-smi.txt", "cmd/nvidia-smi-q.xml", "cmd/dmesg.txt",
                "files/proc/driver/nvidia/version", "metrics/dcgm-exporter.prom"):
        path = root / rel
        if path.is_file():
            path.write_text(_renamed(path.read_text(encoding="utf-8"), driver, cuda), encoding="utf-8")


_DEFAULT_DRIVER = re.compile(re.escape(DRIVER_VERSION) + "( *)")
_DEFAULT_CUDA = re.compile(r"(?<=CUDA Version: )" + re.escape(CUDA_VERSION) + "( *)")


def _renamed(text: str, driver: str, cuda: str) -> str:
    """``text`` with the simulator's driver and CUDA versions replaced; nvidia-smi's table
    keeps its columns (the padding after a version absorbs a length change)."""
    def pad(new: str, match: re.Match[str]) -> str:
        return new.ljust(max(len(match[0]), len(new) + 1)) if match[1] else new

    text = _DEFAULT_DRIVER.sub(lambda m: pad(driver, m), text)
    text = text.replace(f">{CUDA_VERSION}</cuda_version>", f">{cuda}</cuda_version>")
    return _DEFAULT_CUDA.sub(lambda m: pad(cuda, m), text)
