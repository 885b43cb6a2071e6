"""Docker 29 serves a --gpus request that no registered device driver takes through its CDI
device injector, which picks the GPU vendor from the CDI specs on the host (moby/moby daemon,
the injector's vendor resolution and its test TestCDIDeviceInjectorResolveVendor). With
nothing of NVIDIA's registered it answers 'failed to discover GPU vendor from CDI: no known GPU
vendor found', or, having fallen to the AMD vendor on an NVIDIA host, 'AMD CDI spec not found':
the toolkit not wired into the daemon for --gpus, whatever words the daemon uses. A CDI device
named by hand that no spec resolves keeps its own reading (the spec's generation).

Sources, each line beside its address."""

from __future__ import annotations

from case import Case, docker_refused_case
from scoreboard import top_pair

#: https://github.com/stevezau/media_preview_generator/issues/260 (Unraid, RTX A5500, --gpus all;
#: the maintainer's answer: use the NVIDIA runtime)
MEDIA_PREVIEW_260 = "docker: Error response from daemon: AMD CDI spec not found"
#: The daemon's answer with no vendor's spec at all, as setup notes in public repositories quote
#: it ("the NVIDIA Container Toolkit is not installed ... Docker reports this as ...")
NO_VENDOR = ("docker: Error response from daemon: failed to discover GPU vendor from CDI: "
             "no known GPU vendor found")
#: Look-alike: a CDI device asked by name (--device nvidia.com/gpu=0) that no spec resolves: the
#: spec's generation, not the --gpus registration.
UNRESOLVABLE = "docker: Error response from daemon: unresolvable CDI devices nvidia.com/gpu=0"
#: Look-alike: an unrelated "spec not found" of the daemon's (a plugin's spec file).
PLUGIN_SPEC = "docker: Error response from daemon: plugin spec not found for volume driver x"

_UNREGISTERED = ("container-toolkit", "docker_gpu_capability_unregistered")


def _refused(message: str) -> Case:
    return docker_refused_case("x-docker-cdi-vendor", message)


def test_the_cdi_vendor_refusal_of_gpus_is_the_toolkit_not_registered() -> None:
    wrapped = "docker: Error response from\n   daemon: AMD CDI spec not found"  # as #260 pasted it
    for line in (MEDIA_PREVIEW_260, NO_VENDOR, wrapped):
        assert top_pair(_refused(line)) == _UNREGISTERED, line


def test_a_named_cdi_device_no_spec_resolves_keeps_its_own_reading() -> None:
    assert top_pair(_refused(UNRESOLVABLE)) != _UNREGISTERED


def test_another_spec_not_found_keeps_no_reading() -> None:
    assert top_pair(_refused(PLUGIN_SPEC)) != _UNREGISTERED
