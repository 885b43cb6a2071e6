"""nvidia-container-cli's own debug log on the node (config.toml's ``[nvidia-container-cli]
debug = "/var/log/nvidia-container-toolkit.log"``, the log the toolkit's issue template asks
for): its last run that logged an error-level line and never got past its initialisation is
the hook that failed every GPU container, and that line says why. A run that shut its context
down had initialised (libnvidia-container src/nvc.c logs "shutting down library context" only
for an initialised context), a later run without an error went through, and warnings are no
error.

Sources: NVIDIA/nvidia-docker#1090 (the driver container's root not under /run/nvidia/driver),
OE4T/meta-tegra#1456 (libcuda.so.1 not found in the driver root, a Jetson), NVIDIA/nvidia-docker
#1203 (a TX2 whose CLI could not load the NVIDIA kernel modules); look-alikes the warnings of an
unprivileged run (NVIDIA/nvidia-docker#957, #1248, NVIDIA/nvidia-container-toolkit#154)."""

from __future__ import annotations

import pytest
from case import Case, synthetic_case
from scoreboard import top_pair

HEADER = "\n-- WARNING, the following logs are for debugging purposes only --\n\n"

FAILED = {
    # https://github.com/OE4T/meta-tegra/pull/1456
    "meta-tegra-1456": ("\n".join([
        "I0116 15:56:51.761083 1362 nvc.c:281] initializing library context (version=0.11.0+jetpack, "
        "build=1b60893021cd00c87f201d11eb207215afa3ab11)",
        "I0116 15:56:51.761474 1362 nvc.c:255] using root /",
        "I0116 15:56:51.761547 1362 nvc.c:256] using ldcache /etc/ld.so.cache",
        "I0116 15:56:51.761618 1362 nvc.c:257] using unprivileged user 65534:65534",
        "I0116 15:56:51.762404 1363 driver.c:134] starting driver service",
        "E0116 15:56:51.763612 1363 driver.c:196] could not start driver service: load library failed: "
        "libcuda.so.1: cannot open shared object file: no such file or directory",
        "I0116 15:56:51.764073 1362 driver.c:231] driver service terminated successfully"]),
        "container_cli_no_driver_libs"),
    # https://github.com/NVIDIA/nvidia-docker/issues/1203 (a TX2's run, its first lines)
    "nvidia-docker-1203": ("\n".join([
        "I0609 06:28:32.004669 8657 nvc.c:281] initializing library context (version=1.1.1, "
        "build=e5d6156aba457559979597c8e3d22c5d8d0622db)",
        "I0609 06:28:32.004901 8657 nvc.c:255] using root /",
        "W0609 06:28:32.005415 8657 nvc.c:171] failed to detect NVIDIA devices",
        "I0609 06:28:32.005723 8658 nvc.c:191] loading kernel module nvidia",
        "E0609 06:28:32.006013 8658 nvc.c:193] could not load kernel module nvidia",
        "I0609 06:28:32.006037 8658 nvc.c:203] loading kernel module nvidia_uvm",
        "E0609 06:28:32.006142 8658 nvc.c:205] could not load kernel module nvidia_uvm"]), None),
}

#: An unprivileged run's warnings, then its driver service and libraries (no error).
# https://github.com/NVIDIA/nvidia-docker/issues/957
CLEAN_RUN = "\n".join([
    "I0420 02:47:27.364644 3475 nvc.c:281] initializing library context (version=1.0.0, "
    "build=881c88e2e5bb682c9bb14e68bd165cfb64563bb1)",
    "I0420 02:47:27.364707 3475 nvc.c:255] using root /",
    "W0420 02:47:27.367609 3478 nvc.c:186] failed to set inheritable capabilities",
    "W0420 02:47:27.367677 3478 nvc.c:187] skipping kernel modules load due to failure",
    "I0420 02:47:27.367982 3479 driver.c:133] starting driver service",
    "I0420 02:47:27.433497 3475 nvc_info.c:433] requesting driver information with ''"])


def _node(name: str, text: str, *, healthy: bool) -> Case:
    return synthetic_case(f"cli-log-{name}", [
        {"kind": "workload", "name": "cuda-smi", "namespace": "default", "state": "RunContainerError"},
        {"kind": "node-file", "path": "var/log/nvidia-container-toolkit.log", "text": HEADER + text + "\n"},
    ], platform="docker", healthy=healthy)


@pytest.mark.parametrize("name", sorted(FAILED))
def test_the_clis_last_run_failing_its_initialisation_is_the_toolkits(name: str) -> None:
    text, cause = FAILED[name]
    found = top_pair(_node(name, text, healthy=False))
    assert found is not None and found[0] == "container-toolkit", found
    assert cause is None or found[1] == cause, found


def test_warnings_of_an_unprivileged_run_are_no_failure() -> None:
    assert top_pair(_node("warnings", CLEAN_RUN, healthy=True)) is None


def test_a_later_run_without_an_error_went_through() -> None:
    text = FAILED["meta-tegra-1456"][0] + "\n" + CLEAN_RUN
    assert top_pair(_node("later-clean", text, healthy=True)) is None


def test_a_run_that_shut_its_context_down_had_initialised() -> None:
    # the TX2's module errors, then nvc_shutdown's line (libnvidia-container src/nvc.c)
    text = FAILED["nvidia-docker-1203"][0] + "\n" + "\n".join([
        "I0609 06:28:33.104221 8657 nvc.c:314] shutting down library context",
        "I0609 06:28:33.104530 8659 driver.c:191] terminating driver service",
        "I0609 06:28:33.105012 8657 driver.c:231] driver service terminated successfully"])
    assert top_pair(_node("shut-down", text, healthy=True)) is None
