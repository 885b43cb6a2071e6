"""Deterministic names, ids and timestamps for simulated objects.

Everything is derived from a hash of a stable key (node, namespace, object name),
so the same scenario always produces byte-identical bundles, and a node keeps the
same pod names, UIDs and GPU UUIDs across scenarios (handy when diffing bundles).
"""

from __future__ import annotations

import functools
import hashlib
from datetime import datetime, timedelta

# Alphabet Kubernetes uses for generated name suffixes (no vowels, no 0/1/3).
_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def digest(key: str, size: int = 16) -> bytes:
    """Stable pseudo-random bytes for `key`."""
    return hashlib.blake2b(key.encode(), digest_size=size).digest()


def number(key: str, modulo: int) -> int:
    """Stable integer in [0, modulo) for `key`."""
    return int.from_bytes(digest(key, 8), "big") % modulo


def suffix(key: str, length: int = 5) -> str:
    """A generateName-style suffix such as `7xk2p`."""
    raw = digest(key, length)
    return "".join(_SUFFIX_ALPHABET[b % len(_SUFFIX_ALPHABET)] for b in raw)


def hex_id(key: str, chars: int = 64) -> str:
    """Hex string of `chars` characters (container ids, image digests)."""
    return digest(key, (chars + 1) // 2).hex()[:chars]


def uid(key: str) -> str:
    """A version-4-shaped UUID, as the API server assigns to objects."""
    return uid_and_version(key)[0]


def uid_and_version(key: str) -> tuple[str, str]:
    """UID plus a resourceVersion, both from one hash (hot path when building 100k pods)."""
    raw = digest(key, 20)
    h = bytearray(raw[:16])
    h[6] = (h[6] & 0x0F) | 0x40
    h[8] = (h[8] & 0x3F) | 0x80
    s = h.hex()
    version = str(1000 + int.from_bytes(raw[16:], "big") % 9_000_000)
    return f"{s[:8]}-{s[8:12]}-{s[12:16]}-{s[16:20]}-{s[20:]}", version


def gpu_uuid(node: str, index: int) -> str:
    """NVML-style GPU UUID; random-looking and unique per node and index."""
    s = digest(f"gpu:{node}:{index}", 16).hex()
    return f"GPU-{s[:8]}-{s[8:12]}-{s[12:16]}-{s[16:20]}-{s[20:]}"


def pod_template_hash(key: str) -> str:
    """ReplicaSet pod-template-hash / DaemonSet controller-revision-hash shape."""
    return suffix(f"hash:{key}", 10)


@functools.cache
def image_digest(image: str) -> str:
    """`repo@sha256:...` as the kubelet reports in imageID."""
    repo = image.rsplit(":", 1)[0] if "@" not in image else image.split("@", 1)[0]
    return f"{repo}@sha256:{hex_id('image:' + image)}"


def container_id(key: str, runtime: str = "containerd") -> str:
    """`containerd://<64 hex>` (or cri-o://) container id."""
    return f"{runtime}://{hex_id('ctr:' + key)}"


def parse_time(text: str) -> datetime:
    """RFC 3339 `...Z` to an aware datetime."""
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


@functools.lru_cache(maxsize=1 << 16)
def rfc3339(moment: datetime) -> str:
    """Kubernetes metav1.Time format (second precision, Z); all simulated times are UTC."""
    return moment.isoformat()[:19] + "Z"


def jitter(key: str, max_seconds: int) -> timedelta:
    """A stable offset so pods on different nodes do not start in lockstep."""
    return timedelta(seconds=number("jitter:" + key, max(1, max_seconds)))
