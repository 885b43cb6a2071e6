"""A container runtime's image store full while it unpacks a pulled image.

The runtime writes each layer of an image it pulls into its own storage (Docker's data root,
containerd's content store and snapshotter, containers/storage for CRI-O and Podman) and,
where that filesystem is full, its own unpack step fails with the kernel's ENOSPC after the
file it was writing. Each runtime names that step in its own words:

* Docker: "failed to register layer: Error processing tar file(exit status 1): write <file>:
  no space left on device" (moby's layer store; older releases "ApplyLayer exit status 1
  stdout: stderr: write ..." and "Untar re-exec error"): moby/moby#32811, moby/moby#29508,
  NVIDIA/nvidia-docker#792;
* containerd: "failed to extract layer ... write /var/lib/.../io.containerd.snapshotter.v1
  .overlayfs/snapshots/N/fs/...: no space left on device" (usestrix/strix#483);
* containers/image (CRI-O, Podman): "writing blob: storing blob to file "/var/tmp/...":
  write ...: no space left on device" (containers/image storage/storage_dest.go).

The node's storage for images is the runtime's, not the image's nor the job's: the pull is
the container runtime's, short of space (error_resource_exhausted by the line's class). The
same ENOSPC from a running job's own write (a checkpoint, /dev/shm) names none of these steps
and is not read here.
"""

from __future__ import annotations

from gpunode.relazy import lazy_compile

#: A runtime's unpack or store step (module doc) and ENOSPC later in the same line.
_UNPACK_NO_SPACE = lazy_compile(
    r"(?i:\b(?:failed to register layer|Error processing tar file|ApplyLayer exit status"
    r"|Untar re-exec error|failed to extract layer|failed to (?:pull and )?unpack image"
    r"|storing blob to file|writing blob)\b.{0,600}?\bno space left on device\b)")


def image_store_full(line: str) -> bool:
    """``line`` is a runtime's own unpack of an image failing for want of space."""
    return "space" in line and _UNPACK_NO_SPACE.search(line) is not None
