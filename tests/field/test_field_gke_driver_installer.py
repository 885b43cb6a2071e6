"""GKE's driver installer in its own words. "GPU driver auto installation is disabled." is the
installer on a node pool whose driver version is "disabled" (node auto-provisioning's default):
it installs nothing and waits for a driver someone else installs, so the node has none:
driver_not_loaded (GoogleCloudPlatform/container-engine-accelerators#402, #407). COS's
installer refusing its release for the node's GPU, "Driver version 470.182.03 doesn't support
L4 GPU devices." (cos_gpu_installer's checkDriverCompatibility), is unsupported_gpu while it
runs on without installing (substratusai/runbooks#37); once it goes on to install a release
(its fallback branch) the refusal is history and the node stays healthy."""

from __future__ import annotations

from case import Case, synthetic_case
from scoreboard import top_pair

DISABLED = ("GPU driver auto installation is disabled.\n"
            "Waiting for GPU driver libraries to be available.\n")
REFUSED = ("I0625 05:36:32.677469    5389 installer.go:424] Getting the default GPU driver version\n"
           "W0625 05:36:32.745071    5389 install.go:488]\n"
           "Driver version 470.182.03 doesn't support L4 GPU devices.\n"
           "I0625 05:36:32.745276    5389 installer.go:424] Getting the R525 GPU driver version\n"
           "Waiting for GPU driver libraries to be available.\n")


def _case(text: str, healthy: bool = False) -> Case:
    evidence = [{"kind": "node-labels", "labels": {"cloud.google.com/gke-accelerator": "nvidia-l4"}},
                {"kind": "log", "component": "driver", "container": "nvidia-driver-ctr", "text": text},
                {"kind": "pod-state", "component": "driver", "container": "nvidia-driver-ctr",
                 "state": "Running"}]
    return synthetic_case("x-gke-installer", evidence, platform="gke", healthy=healthy,
                          cluster={"gpu_node": {"gpus": 1}})


def test_auto_installation_disabled_is_no_driver() -> None:
    """container-engine-accelerators#407's installer lines in its running pod."""
    assert top_pair(_case(DISABLED)) == ("driver", "driver_not_loaded")


def test_installer_refusing_the_release_for_the_gpu_is_unsupported_gpu() -> None:
    """substratusai/runbooks#37: COS's default R470 refused for an L4, no fallback published."""
    assert top_pair(_case(REFUSED)) == ("driver", "unsupported_gpu")


def test_a_refusal_followed_by_the_fallback_install_stays_healthy() -> None:
    """The same refusal, then the installer installs its fallback branch and finishes."""
    text = REFUSED.replace("Waiting for GPU driver libraries to be available.\n",
                           "Installing GPU driver version 535.104.05\n"
                           "Finished installing the drivers.\n")
    assert top_pair(_case(text, healthy=True)) is None


def test_an_installer_that_installs_stays_healthy() -> None:
    """The installer's ordinary run: its waiting line without the disabled notice."""
    text = ("Installing GPU driver version 535.104.05\n"
            "Finished installing the drivers.\n"
            "Waiting for GPU driver libraries to be available.\n")
    assert top_pair(_case(text, healthy=True)) is None
