"""The graphics and video libraries' words in a GPU job's log (data/job_errors/graphics_video.toml):
the Vulkan loader finding no driver is the container's driver files (the toolkit's to place), the
Video Codec SDK's API check is the driver too old; a program that only probes Vulkan and falls back
(Dawn's "Warning:"), NVENC's session limit and a video library the container did not ask for stay
silent."""

from __future__ import annotations

import pytest
from case import running_job_case
from scoreboard import top_pair

#: NixOS/nixpkgs#529876: vulkaninfo in a container whose CDI spec left out nvidia_icd.json
NIXPKGS_529876 = "Found no drivers!"
#: NVIDIA/nvidia-container-toolkit#1124: vulkaninfo in a Holoscan container, icd.d not mounted
TOOLKIT_1124 = ("Cannot create Vulkan instance.\n"
                "This problem is often caused by a faulty installation of the Vulkan driver or attempting"
                " to use a GPU that does not support Vulkan.\n"
                "ERROR at ./vulkaninfo/vulkaninfo.h:649:"
                "vkCreateInstance failed with ERROR_INCOMPATIBLE_DRIVER")
#: k4yt3x/video2x#628: an older vulkaninfo in nvidia/vulkan with --gpus 1 and no device nodes
VIDEO2X_628 = ("ERROR: [Loader Message] Code 0 : loader_scanned_icd_add: Could not get 'vkCreateInstance'"
               " via 'vk_icdGetInstanceProcAddr' for ICD libGLX_nvidia.so.0\n"
               "Cannot create Vulkan instance.\n"
               "/root/sdk-build/1.2.131.2/source/Vulkan-Tools/vulkaninfo/vulkaninfo.h:371:"
               " failed with ERROR_INCOMPATIBLE_DRIVER")
#: the loader's own line (KhronosGroup/Vulkan-Loader loader/loader.c) at its error level
LOADER = "ERROR: [Loader Message] Code 0 : vkCreateInstance: Found no drivers!"
#: NVIDIA/VideoProcessingFramework#364: the Video Codec SDK's NvEncoder on driver 450
VPF_364 = ("RuntimeError: LoadNvEncAPI: Current Driver Version does not support this NvEncodeAPI version,"
           " please upgrade driver at /root/Git/VideoProcessingFramework/PvNvCodec/TC/src/NvEncoder.cpp:125")
#: Dawn (Chromium's WebGPU, an Electron app) probing Vulkan and falling back, its loader relay a warning
DAWN_FALLBACK = ("Warning: vkCreateInstance: Found no drivers!\n"
                 "Warning: vkCreateInstance failed with VK_ERROR_INCOMPATIBLE_DRIVER\n"
                 "    at CheckVkSuccessImpl"
                 " (../../third_party/dawn/src/dawn/native/vulkan/VulkanError.cpp:88)")
#: FFmpeg's NVENC at a consumer board's session limit (NV_ENC_ERR_OUT_OF_MEMORY, 10)
SESSION_LIMIT = "[h264_nvenc @ 0x55ca461fa380] OpenEncodeSessionEx failed: out of memory (10): (no details)"
#: FFmpeg's NVENC on a board without an encoder (A100, H100: NV_ENC_ERR_UNSUPPORTED_DEVICE)
NO_ENCODER = "[h264_nvenc @ 0x5581c2a0] OpenEncodeSessionEx failed: unsupported device (2): (no details)"


@pytest.mark.parametrize("text", [NIXPKGS_529876, TOOLKIT_1124, VIDEO2X_628, LOADER])
def test_the_vulkan_loader_finding_no_driver_is_the_containers_driver_files(text: str) -> None:
    assert top_pair(running_job_case("vk-job", text)) == ("container-toolkit", "error_file_state")


def test_the_video_codec_sdks_api_check_is_the_driver_too_old() -> None:
    # asked of libnvidia-encode, so the container did get the driver's library
    assert top_pair(running_job_case("enc-job", VPF_364)) == ("driver", "cuda_driver_too_old")


@pytest.mark.parametrize("text", [DAWN_FALLBACK, SESSION_LIMIT, NO_ENCODER])
def test_a_fallback_a_session_limit_and_a_board_without_nvenc_stay_silent(text: str) -> None:
    assert top_pair(running_job_case("quiet-job", text)) is None
