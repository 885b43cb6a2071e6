"""The host installer's last run aborted because an NVIDIA module it was to replace is loaded:
on a node whose driver is loaded, that loaded driver is the conflict (host_driver_conflict).
The installer's warning that goes on to unload, and a run that then installed the driver,
say nothing (Miopas's CentOS 7 runfile reinstall: the old driver's nvidia module loaded)."""

from __future__ import annotations

import msgspec
from case import Case
from scoreboard import top_pair


def _case(text: str) -> Case:
    raw = {"id": "x-installer-over-loaded", "source": "https://example.org/x", "title": "t",
           "platform": "rhel", "cluster": {"driver_mode": "host"},
           "evidence": [{"kind": "node-file", "path": "var/log/nvidia-installer.log", "text": text}],
           "expect": {"healthy": False}}
    return msgspec.convert(raw, Case)


_ABORT = ("ERROR: An NVIDIA kernel module 'nvidia' appears to already be loaded in your kernel.  This may be "
          "because it is in use (for\n")


def test_an_install_refused_over_the_loaded_driver_is_the_conflict() -> None:
    assert top_pair(_case(_ABORT)) == ("driver", "host_driver_conflict")


def test_the_warning_that_goes_on_to_unload_is_silent() -> None:
    text = ("WARNING: An NVIDIA kernel module 'nvidia-uvm' appears to be already loaded in your kernel.\n"
                 "-> Unloading NVIDIA driver kernel modules...\n")
    assert top_pair(_case(text)) is None


def test_a_run_that_then_installed_the_driver_is_silent() -> None:
    text = (_ABORT + "-> Installation of the NVIDIA Accelerated Graphics Driver for Linux-x86_64 "
            "(version: 384.145) is now complete.\n")
    assert top_pair(_case(text)) is None
