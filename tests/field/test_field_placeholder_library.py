"""An NVIDIA library the loader finds empty in a GPU job's container ("file too short",
data/job_errors.toml ``loader-driver-library-placeholder``): the image's zero-length
placeholder at the path the NVIDIA runtime mounts the host's library over, so the container
started without the runtime's injection; the toolkit's, not the job's. ldconfig's notice of
the same empty file while an image is built, and another library's short file, are not."""

from __future__ import annotations

from case import gpu_job_case
from scoreboard import top_pair

from gpunode.job_errors import job_error

#: dusty-nv/jetson-inference#1733: an r32.4.4 image on JetPack 4.6 (the host's TensorRT that
#: `--runtime nvidia` mounts was missing); #1736 the same on a Nano with L4T 32.7.4.
JETSON_INFERENCE_1733 = ("./imagenet: error while loading shared libraries: "
                         "/usr/lib/aarch64-linux-gnu/libnvinfer.so.7.1.3 file too short")
JETSON_INFERENCE_1736 = ("imagenet: error while loading shared libraries: "
                         "/usr/lib/aarch64-linux-gnu/libnvinfer.so.8: file too short")
#: Thinklab-SJTU/R3Det_Tensorflow#78: an x86 image run with plain `docker run` (the answer:
#: use nvidia-docker).
R3DET_78 = "ImportError: /usr/lib/x86_64-linux-gnu/libcuda.so.1: file too short"

#: Look-alikes: ldconfig's notice for the placeholder while an L4T image is built (the file at
#: rest, nothing failed), and a library of the image's own that is cut short.
LDCONFIG = "/sbin/ldconfig.real: File /usr/lib/aarch64-linux-gnu/libcuda.so is empty, not checked."
OWN_LIBRARY = "./app: error while loading shared libraries: /opt/app/lib/libyaml-cpp.so.0.6: file too short"


def test_an_empty_nvidia_library_is_the_toolkit_s() -> None:
    for line in (JETSON_INFERENCE_1733, JETSON_INFERENCE_1736, R3DET_78):
        found = job_error(line)
        assert found is not None and found.component == "container-toolkit", line
    # the synthetic pod names no RuntimeClass on a node whose containerd defaults to runc: the
    # container started without the NVIDIA runtime, as in jetson-inference#1061
    assert top_pair(gpu_job_case("x-placeholder-lib", JETSON_INFERENCE_1736)) == (
        "container-toolkit", "nvidia_not_default_runtime")


def test_ldconfig_s_notice_and_the_image_s_own_library_are_not() -> None:
    for line in (LDCONFIG, OWN_LIBRARY):
        assert job_error(line) is None, line
    assert top_pair(gpu_job_case("x-placeholder-lib-own", OWN_LIBRARY)) is None
