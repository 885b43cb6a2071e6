"""A GPU pod whose image pull fails in the runtime's own unpack step for want of space is the
container runtime's storage exhausted (checks.image_store): Docker's "failed to register layer"
(https://github.com/moby/moby/issues/32811, https://github.com/moby/moby/issues/29508,
https://github.com/NVIDIA/nvidia-docker/issues/792), containerd's "failed to extract layer"
(https://github.com/usestrix/strix/issues/483), containers/image's "storing blob to file"
(https://github.com/containers/image/blob/main/storage/storage_dest.go). Look-alikes: a pull
refused by the registry stays healthy, and the same ENOSPC from a job's own write is not the
runtime's."""

from __future__ import annotations

from typing import Any

from case import Case, synthetic_case
from scoreboard import top_pair

_EXHAUSTED = ("container-runtime", "error_resource_exhausted")
#: moby/moby#32811, NVIDIA/nvidia-docker#792
DOCKER = ("failed to register layer: Error processing tar file(exit status 1): write "
          "/usr/share/vim/vim74/syntax/sisu.vim: no space left on device")
#: moby/moby#29508 (older Docker)
DOCKER_OLD = ("failed to register layer: ApplyLayer exit status 1 stdout:  stderr: mkdir "
              "/root/.npm/registry.npmjs.org/har-validator: no space left on device")
#: usestrix/strix#483 (containerd's snapshotter)
CONTAINERD = ('rpc error: code = Unknown desc = failed to pull and unpack image "ghcr.io/x/y:1": failed to '
              "extract layer sha256:0465d356eb1d: write /var/lib/containerd/io.containerd.snapshotter.v1."
              "overlayfs/snapshots/105/fs/home/u/.cache/x: no space left on device: unknown")
#: containers/image storage_dest.go as CRI-O relays it
CRIO = ('rpc error: code = Unknown desc = writing blob: storing blob to file "/var/tmp/storage2387688446/4": '
        "write /var/tmp/storage2387688446/4: no space left on device")


def _pull(message: str) -> Case:
    evidence: list[dict[str, Any]] = [
        {"kind": "workload", "name": "job-0", "namespace": "default", "container": "main",
         "image": "nvcr.io/nvidia/pytorch:24.01-py3", "state": "ErrImagePull", "message": message},
        {"kind": "event", "object": {"kind": "Pod", "name": "job-0", "namespace": "default"},
         "type": "Warning", "reason": "Failed", "count": 3, "message": message}]
    return synthetic_case("x-image-store", evidence, platform="docker")


def test_an_unpack_short_of_space_is_the_runtime_storage_exhausted() -> None:
    for message in (DOCKER, DOCKER_OLD, CONTAINERD, CRIO):
        assert top_pair(_pull(message)) == _EXHAUSTED, message


def test_a_refused_pull_stays_healthy() -> None:
    assert top_pair(_pull('Failed to pull image "myacr.azurecr.io/adapter:0.0.1": unauthorized')) is None


def test_a_jobs_own_enospc_is_not_the_runtime_storage() -> None:
    evidence: list[dict[str, Any]] = [
        {"kind": "workload", "name": "job-0", "namespace": "default", "container": "main",
         "state": "Error", "exit_code": 1},
        {"kind": "log", "object": {"kind": "Pod", "name": "job-0", "namespace": "default"},
         "container": "main",
         "text": "saving\nOSError: [Errno 28] No space left on device: '/workspace/ckpt/model.pt'\n"}]
    top = top_pair(synthetic_case("x-job-enospc", evidence, platform="docker"))
    assert top is None or top[0] != "container-runtime", top
