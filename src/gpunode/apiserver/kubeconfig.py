"""Write a kubeconfig that points kubectl, lightkube or gpunode at the test server."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import yaml


def kubeconfig_dict(url: str, ca_pem: bytes, token: str,
                    name: str = "gpunode-test") -> dict[str, object]:
    """One cluster, one bearer-token user, one current context, all called ``name``."""
    ca_data = base64.b64encode(ca_pem).decode()
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": {"server": url,
                                                "certificate-authority-data": ca_data}}],
        "users": [{"name": f"{name}-reader", "user": {"token": token}}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": f"{name}-reader"}}],
        "current-context": name,
        "preferences": {},
    }


def write_kubeconfig(path: Path, url: str, ca_pem: bytes, token: str,
                     name: str = "gpunode-test") -> Path:
    """Write the kubeconfig (mode 0600, it holds a token) and return its path.

    Written beside the target and renamed into place, so a reader waiting for the file
    never sees half of it, and the token is never readable by others even briefly.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    text = yaml.safe_dump(kubeconfig_dict(url, ca_pem, token, name), sort_keys=False)
    partial = path.with_name(f".{path.name}.partial")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(text)
    os.replace(partial, path)
    return path
