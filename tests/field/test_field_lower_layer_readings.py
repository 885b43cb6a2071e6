# ruff: noqa: E501  (verbatim public lines)
"""Readings of lower-layer lines found wrong or missing by the held-out audit of public lines
(test_public_lines_lower.py), each with its public line and a look-alike that keeps its reading."""

from __future__ import annotations

from typing import Any

from case import synthetic_case
from scoreboard import explained, top_pair


def _dmesg(text: str) -> Any:
    return synthetic_case("x-lower-gsp", [{"kind": "node-cmd", "name": "dmesg.txt", "text": text}],
                          healthy=False)


#: NVIDIA/open-gpu-kernel-modules#446: the driver's RPC history dump after a GSP RPC timed out,
#: pasted without the Xid 119 line before it.
GSP_HISTORY = (
    "[2026-04-22T21:27:51.288873188Z]: NVRM:     -7    76   GSP_RM_CONTROL              4120 "
    "0x0000000020809001 0x0000000000000008 0x00065013118cede3 0x00065013118cee4b    104us\n"
    "[2026-04-22T21:27:51.288880739Z]: NVRM: GPU3 RPC event history (CPU <- GSP):\n")
GSP = ("driver", "gsp_firmware_unresponsive")


def test_the_driver_s_gsp_rpc_history_dump_says_the_firmware_stopped_answering() -> None:
    assert top_pair(_dmesg(GSP_HISTORY)) == GSP
    assert GSP[1] in {m.cause.code for m in explained(GSP_HISTORY).matches}


def test_an_xid_119_line_before_the_dump_stays_the_more_specific_reading() -> None:
    # the catalogued Xid 119 (NVIDIA's own line form, as the catalog's example gives it)
    xid = ("NVRM: Xid (PCI:0000:17:00): 119, pid=1033872, name=nvc:[driver], Timeout after 6s of waiting "
           "for RPC response from GPU0 GSP! Expected function 76 (GSP_RM_CONTROL) (0x20802a02 0x8).\n")
    assert top_pair(_dmesg(xid + GSP_HISTORY)) == ("gpu-hardware", "xid_119_gsp_timeout")


def test_routine_nvrm_lines_stay_healthy() -> None:
    # negative: the module's load banner and a GPU's announcement (NVIDIA/NVSentinel#155's dmesg)
    text = ("[ 1843.439669] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  570.158.01  Release Build  "
            "(dvs-builder@U22-I3-B10-02-5)  Mon Jun  2 13:13:04 UTC 2025\n")
    assert top_pair(synthetic_case("x-lower-routine", [{"kind": "node-cmd", "name": "dmesg.txt",
                                                        "text": text}])) is None


def _event(message: str) -> Any:
    obj = {"kind": "Pod", "name": "gpu-pod", "namespace": "default"}
    return synthetic_case("x-lower-root", [
        {"kind": "workload", "name": "gpu-pod", "namespace": "default", "state": "CreateContainerError"},
        {"kind": "event", "object": obj, "type": "Warning", "reason": "Failed", "message": message}],
        healthy=False)


#: NVIDIA/nvidia-container-toolkit#679: the CLI cannot chroot into its configured driver root.
CHANGE_ROOT = (
    "failed to create task for container: failed to create shim task: OCI runtime create failed: runc "
    "create failed: unable to start container process: error during container init: error running hook #0: "
    "error running hook: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'\n"
    "nvidia-container-cli: initialization error: change root failed: no such file or directory: unknown.")


def test_a_cli_that_cannot_enter_its_driver_root_finds_no_driver_libraries() -> None:
    assert top_pair(_event(CHANGE_ROOT)) == ("container-toolkit", "container_cli_no_driver_libs")


def test_another_initialization_error_of_the_cli_keeps_its_own_reading() -> None:
    # negative: NVML's version mismatch through the same CLI stays the driver's
    # (saharmor/dalle-playground#104)
    text = ("OCI runtime create failed: runc create failed: unable to start container process: error during "
            "container init: error running hook #0: error running hook: exit status 1, stdout: , stderr: "
            "nvidia-container-cli: initialization error: nvml error: driver/library version mismatch: unknown")
    assert top_pair(_event(text)) == ("driver", "driver_library_mismatch")


#: Frogging-Family/nvidia-all#394: the module refusing a client of another version, in the form
#: that names the client first and puts the versions on the lines after it.
API_CLIENT = ("[    9.424670] NVRM: API mismatch: the client 'kwin_wayland' (pid 1005)\n"
              "               NVRM: has the version 595.84, but this kernel module has\n"
              "               NVRM: the version 595.80.  Please make sure that this\n"
              "               NVRM: kernel module and all NVIDIA driver components\n"
              "               NVRM: have the same version.\n")


def test_an_api_mismatch_that_names_its_client_is_the_driver_upgraded_without_reboot() -> None:
    assert top_pair(_dmesg(API_CLIENT)) == ("driver", "driver_library_mismatch")


def test_a_client_named_in_another_nvrm_line_is_no_api_mismatch() -> None:
    # negative: an NVRM line naming a client process with no version refusal stays off that cause
    text = "[  312.118201] NVRM: GPU0 nvAssertFailedNoLog: Assertion failed: client 'python' (pid 4411)\n"
    assert top_pair(_dmesg(text)) != ("driver", "driver_library_mismatch")


def _refused(message: str, *extra: dict[str, Any]) -> Any:
    obj = {"kind": "Pod", "name": "gpu-pod", "namespace": "default"}
    return synthetic_case("x-lower-admission", [
        *extra,
        {"kind": "workload", "name": "gpu-pod", "namespace": "default", "state": "UnexpectedAdmissionError"},
        {"kind": "event", "object": obj, "type": "Warning", "reason": "UnexpectedAdmissionError",
         "message": message}], healthy=False)


#: Project-HAMi/HAMi#71: the kubelet relays the Allocate answer of the plugin serving nvidia.com/gpu.
ALLOCATE_EOF = ("Allocate failed due to rpc error: code = Unavailable desc = error reading from server: EOF, "
                "which is unexpected")
HAMI = {"kind": "pod-state", "component": "hami-device-plugin", "container": "device-plugin", "state": "Running"}


def test_an_allocate_answer_where_hami_s_plugin_serves_the_gpus_is_hami_s() -> None:
    assert top_pair(_refused(ALLOCATE_EOF, HAMI)) == ("hami-device-plugin", "error_unreachable")


def test_the_same_answer_where_nvidia_s_plugin_serves_keeps_its_catalogued_cause() -> None:
    # negative: no plugin that replaces NVIDIA's runs on the node
    assert top_pair(_refused(ALLOCATE_EOF)) == ("device-plugin", "gpu_admission_failed")
