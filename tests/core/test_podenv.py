"""The NVIDIA container variables as NVIDIA's runtime reads them (gpunode.podenv), from the
container toolkit's table:
https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html
(NVIDIA_VISIBLE_DEVICES: all, none, void or empty, a list of indexes or UUIDs;
NVIDIA_DRIVER_CAPABILITIES: compute, utility, video, graphics, display, all; empty is the
default utility,compute: https://github.com/containerd/nerdctl/pull/1024)."""

from __future__ import annotations

from gpunode.bundle.kube import Container, EnvVar
from gpunode.podenv import NvidiaEnv, library_capability, nvidia_env


def test_only_literal_values_are_known() -> None:
    ctr = Container(env=(EnvVar("NVIDIA_VISIBLE_DEVICES", "all"), EnvVar("NVIDIA_DRIVER_CAPABILITIES", None),
                         EnvVar("OTHER", "x")))
    assert nvidia_env(ctr) == NvidiaEnv("all", None)
    assert nvidia_env(Container()) == NvidiaEnv()


def test_the_last_of_a_name_wins() -> None:
    ctr = Container(env=(EnvVar("NVIDIA_DRIVER_CAPABILITIES", "utility"),
                         EnvVar("NVIDIA_DRIVER_CAPABILITIES", "compute,utility")))
    assert not nvidia_env(ctr).lacks("compute")


def test_capabilities() -> None:
    assert NvidiaEnv(capabilities="utility").lacks("compute")
    assert NvidiaEnv(capabilities=" Utility , Video").wanted() == frozenset({"utility", "video"})
    assert not NvidiaEnv(capabilities="all").lacks("video")
    assert NvidiaEnv(capabilities="").wanted() == frozenset({"utility", "compute"})
    assert NvidiaEnv(capabilities="").lacks("graphics")
    assert not NvidiaEnv().lacks("compute")  # not known: nothing said


def test_visible_devices() -> None:
    assert NvidiaEnv(visible="void").asks_nothing() and NvidiaEnv(visible="").asks_nothing()
    assert NvidiaEnv(visible="none").asks_no_gpu() and not NvidiaEnv(visible="none").asks_nothing()
    assert not NvidiaEnv(visible="all").asks_no_gpu() and not NvidiaEnv().asks_no_gpu()
    assert NvidiaEnv(visible="0,1,4,5").devices() == ("0", "1", "4", "5")
    assert NvidiaEnv(visible="GPU-fef8089b").devices() == ("GPU-fef8089b",)
    assert NvidiaEnv(visible="all").devices() == () == NvidiaEnv().devices()


def test_library_capability() -> None:
    assert library_capability("ImportError: libcuda.so.1: cannot open shared object file") == "compute"
    assert library_capability("Cannot load libnvidia-encode.so.1") == "video"
    assert library_capability("Cannot load libnvcuvid.so.1") == "video"
    assert library_capability("libEGL_nvidia.so.0: cannot open shared object file") == "graphics"
    assert library_capability("NVIDIA-SMI couldn't find libnvidia-ml.so library") == "utility"
    assert library_capability("CUDA error: out of memory") is None
