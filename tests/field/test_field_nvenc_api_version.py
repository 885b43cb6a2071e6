"""FFmpeg's NVENC encoder finding the driver's NVENC API older than the one it was built for
("Driver does not support the required nvenc API version. Required: X Found: Y") is the
driver too old for the job's image: the NVENC API a node offers is its driver's release, read
from the driver's own libnvidia-encode, so the runtime did hand the container the driver.
The line that follows it, "The minimum required Nvidia driver for nvenc is ... or newer", is
printed also where libnvidia-encode could not be loaded at all and is not read alone."""

from __future__ import annotations

from typing import Any

from case import Case, synthetic_case
from scoreboard import top_pair

#: https://github.com/HandBrake/HandBrake/issues/5641 (ffmpeg 6.1 needs API 12.1, driver offers 12.0)
HANDBRAKE_5641 = ("[h264_nvenc @ 000001aedcf7e740] Driver does not support the required nvenc API version."
                  " Required: 12.1 Found: 12.0\n"
                  "[h264_nvenc @ 000001aedcf7e740] The minimum required Nvidia driver for nvenc is (unknown)"
                  " or newer")
#: https://github.com/ladaapp/lada/issues/130 (PyAV's logger prefix, API 13.0 against 12.2)
LADA_130 = ("ERROR:libav.h264_nvenc:Driver does not support the required nvenc API version."
            " Required: 13.0 Found: 12.2\n"
            "ERROR:libav.h264_nvenc:The minimum required Nvidia driver for nvenc is (unknown) or newer")
#: https://github.com/livepeer/go-livepeer/pull/1106 (nv-codec-headers 9.1 against a 9.0 driver)
LIVEPEER_1106 = ("[h264_nvenc @ 0x7ff3e9b83c00] Driver does not support the required nvenc API version."
                 " Required: 9.1 Found: 9.0\n"
                 "[h264_nvenc @ 0x7ff3e9b83c00] The minimum required Nvidia driver for nvenc is 418.30"
                 " or newer\n"
                 "Error opening video encoder")
#: https://github.com/AlphaAtlas/VapourSynthColab/issues/4 (hevc_nvenc on a Colab Tesla P100)
COLAB_4 = ("[hevc_nvenc @ 0x560aa0890480] Driver does not support the required nvenc API version."
           " Required: 9.1 Found: 9.0\n"
           "[hevc_nvenc @ 0x560aa0890480] The minimum required Nvidia driver for nvenc is 435.21 or newer")
#: Look-alike: libnvidia-encode not in the container at all (FFmpeg's nvenc_load_libraries prints
#: the same requirement line after the loader's failure): no driver version was read.
NOT_LOADED = ("[h264_nvenc @ 0x55d0c4a3b2c0] Cannot load libnvidia-encode.so.1\n"
              "[h264_nvenc @ 0x55d0c4a3b2c0] The minimum required Nvidia driver for nvenc is 455.28 or newer")


def _job(text: str) -> Case:
    evidence: list[dict[str, Any]] = [
        {"kind": "workload", "name": "transcode-0", "namespace": "media", "container": "ffmpeg",
         "state": "Running"},
        {"kind": "log", "object": {"kind": "Pod", "name": "transcode-0", "namespace": "media"},
         "container": "ffmpeg", "text": text + "\n"}]
    return synthetic_case("x-nvenc", evidence)


def test_the_drivers_nvenc_api_older_than_the_jobs_is_the_driver_too_old() -> None:
    for text in (HANDBRAKE_5641, LADA_130, LIVEPEER_1106, COLAB_4):
        assert top_pair(_job(text)) == ("driver", "cuda_driver_too_old"), text


def test_the_requirement_line_after_a_library_not_loaded_is_not_the_driver_too_old() -> None:
    assert top_pair(_job(NOT_LOADED)) is None
