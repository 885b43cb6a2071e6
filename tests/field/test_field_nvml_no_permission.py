"""NVML's "Insufficient Permissions" in a GPU workload, settled by the node's OS: NVML answers it
where opening the driver's device nodes is refused with EACCES. On an OS that confines
containers with SELinux by default (the RHEL family, Fedora, Bottlerocket) that is the runtime's
labelling (NVIDIA/nvidia-docker#676: the same image works with --privileged); elsewhere it is the
driver's device-file mode (NVIDIA/nvidia-container-toolkit#210, Gentoo) and stays the driver's."""

from __future__ import annotations

from typing import Any

from case import Case, synthetic_case
from scoreboard import top_pair

NO_PERMISSION = "Failed to initialize NVML: Insufficient Permissions"


def _case(line: str, os_image: str | None) -> Case:
    evidence: list[dict[str, Any]] = [
        {"kind": "log", "object": {"kind": "Pod", "name": "cuda-smi", "namespace": "default"},
         "text": line + "\n"}]
    if os_image is not None:
        evidence.append({"kind": "node-info", "fields": {"osImage": os_image}})
    return synthetic_case("x-nvml-no-permission", evidence, platform="docker",
                          cluster={"driver_mode": "host"})


def test_selinux_os_makes_it_the_runtimes_confinement() -> None:
    assert top_pair(_case(NO_PERMISSION, "Red Hat Enterprise Linux 9.4 (Plow)")) == ("container-runtime",
                                                                                      "error_device")
    assert top_pair(_case(NO_PERMISSION, "Fedora Linux 40 (Server Edition)")) == ("container-runtime",
                                                                                   "error_device")


def test_other_os_keeps_the_driver() -> None:
    assert top_pair(_case(NO_PERMISSION, "Ubuntu 22.04.4 LTS")) == ("driver", "error_device")
    assert top_pair(_case(NO_PERMISSION, None)) == ("driver", "error_device")


def test_other_nvml_words_on_selinux_os_are_not_confinement() -> None:
    top = top_pair(_case("Failed to initialize NVML: Driver/library version mismatch", "Rocky Linux 9.3"))
    assert top is not None and top[0] == "driver"
