"""NVML's device handle that a Go program could not get is a device error, in go-nvlib's and
mig-parted's wording ("error getting device handle for index '0': Unknown Error", "error
getting device handle: Invalid Argument"), beside nvidia-smi's "Unable to determine the device
handle": the driver could not give a handle for the GPU (NVIDIA/mig-parted#14, on SR-IOV
virtual functions). A handle of something other than a device is not."""

from __future__ import annotations

from gpunode.kb import load_kb

DEVICE = "error_device"


def test_go_wordings_of_a_device_handle_not_got_are_device_errors() -> None:
    kb = load_kb()
    assert kb.class_of("error getting device handle for index '0': Unknown Error") == DEVICE
    fatal = "FATA[0000] Error checking MIG capable: error getting device handle: Invalid Argument"
    assert kb.class_of(fatal) == DEVICE
    assert kb.class_of("Unable to determine the device handle for GPU0000:3B:00.0: Unknown Error") == DEVICE


def test_other_handles_are_not_device_errors() -> None:
    kb = load_kb()
    assert kb.class_of("error getting file handle: bad descriptor") != DEVICE
    assert kb.class_of("error getting device plugin config map") != DEVICE
