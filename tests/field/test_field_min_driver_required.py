"""A GPU job that names the oldest driver release it runs on, on a node whose own driver is
older, is the driver too old for the job's image: FFmpeg's NVENC encoders print "The minimum
required Nvidia driver for nvenc is 418.30 or newer" (libavcodec/nvenc.c; livepeer/go-livepeer
#1106, AlphaAtlas/VapourSynthColab#4) and applications relay it in their words ("Minimum
required Nvidia driver is 570.0 or newer" from an image built for NVENC API 13 on a 550 host,
jvdillon/netv#42). FFmpeg prints the same requirement where libnvidia-encode did not load at
all, so the line is read against the node's driver release, never alone: a node whose driver
meets it is not blamed."""

from __future__ import annotations

from typing import Any

from case import Case, synthetic_case
from scoreboard import top_pair

RELAYED = ("NVENC (h264_nvenc): unavailable\nRequired: NVENC API 13.0\nFound: 12.2\n"
           "Minimum required Nvidia driver is 570.0 or newer")
#: FFmpeg's own form after the library did not load (nvenc_load_libraries)
NOT_LOADED = ("[h264_nvenc @ 0x55d0c4a3b2c0] Cannot load libnvidia-encode.so.1\n"
              "[h264_nvenc @ 0x55d0c4a3b2c0] The minimum required Nvidia driver for nvenc is 455.28 or newer")
FFMPEG_UNKNOWN = ("[h264_nvenc @ 0x55d0c4a3b2c0] The minimum required Nvidia driver for nvenc is (unknown) "
                  "or newer")


def _job(text: str, driver: str, healthy: bool) -> Case:
    evidence: list[dict[str, Any]] = [
        {"kind": "workload", "name": "transcode-0", "namespace": "media", "container": "ffmpeg",
         "state": "Running"},
        {"kind": "log", "object": {"kind": "Pod", "name": "transcode-0", "namespace": "media"},
         "container": "ffmpeg", "text": text + "\n"}]
    return synthetic_case("x-min-driver", evidence, healthy=healthy, platform="docker",
                          cluster={"driver_mode": "host", "gpu_node": {"gpus": 1, "driver_version": driver}})


def test_a_requirement_above_the_nodes_driver_is_the_driver_too_old() -> None:
    assert top_pair(_job(RELAYED, "550.163.01", healthy=False)) == ("driver", "cuda_driver_too_old")
    text = NOT_LOADED.replace("455.28", "580.65")
    assert top_pair(_job(text, "570.133.20", healthy=False)) == ("driver", "cuda_driver_too_old")


def test_a_requirement_the_nodes_driver_meets_is_not_read() -> None:
    assert top_pair(_job(NOT_LOADED, "550.163.01", healthy=True)) is None
    assert top_pair(_job(RELAYED, "570.133.20", healthy=True)) is None


def test_a_requirement_without_a_release_is_not_read() -> None:
    assert top_pair(_job(FFMPEG_UNKNOWN, "550.163.01", healthy=True)) is None
