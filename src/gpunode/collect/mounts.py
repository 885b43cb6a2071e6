"""Map a path inside a container to the host path behind it.

The toolkit container sees the host's containerd directory at
``/runtime/config-dir/``; a bundle stores node files under their host path.
Both the collector (to name what it read) and the test server (to answer a
``cat``) translate through the pod's hostPath volumes the same way.
"""

from __future__ import annotations

import posixpath

from gpunode.collect.slim import Container, Pod
from gpunode.collect.targets import OPERATOR_DEFAULT_MOUNTS


def host_path(pod: Pod, container: Container, path: str) -> str | None:
    """The host path behind ``path`` in ``container``: hostPath mounts, or the shared /proc."""
    path = posixpath.normpath(path)
    volumes = {v.name: v.host_path.path for v in pod.spec.volumes if v.host_path}
    best: tuple[int, str] | None = None
    for mount in container.volume_mounts:
        mount_path = mount.mount_path.rstrip("/") or "/"
        longer = best is None or len(mount_path) > best[0]
        if mount.name in volumes and _under(path, mount_path) and longer:
            rest = path[len(mount_path):].lstrip("/")
            base = posixpath.join(volumes[mount.name], mount.sub_path)
            best = (len(mount_path), posixpath.join(base, rest) if rest else base)
    if best:
        return best[1]
    if path.startswith("/proc/"):
        return path
    return _default_mount(path) if not container.volume_mounts else None


def _default_mount(path: str) -> str | None:
    """The GPU Operator's usual mounts, for a pod spec saved without its volumes."""
    for inside in sorted(OPERATOR_DEFAULT_MOUNTS, key=len, reverse=True):
        if _under(path, inside):
            rest = path[len(inside):].lstrip("/")
            host = OPERATOR_DEFAULT_MOUNTS[inside]
            return posixpath.join(host, rest) if rest else host
    return None


def _under(path: str, prefix: str) -> bool:
    return prefix in ("/", path) or path.startswith(prefix + "/")
