"""kubeconfig files merged as kubectl merges them, without importing a Kubernetes client.

kubectl's rules (``kubectl config view`` documents them): with several files in
``$KUBECONFIG`` the first file to define a cluster, user or context name wins,
and the first ``current-context`` set wins. Relative file paths inside each file
are relative to that file, so they are made absolute before merging.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from gpunode.errors import UsageError

_SECTIONS = (("clusters", "cluster"), ("users", "user"), ("contexts", "context"))
_PATH_KEYS = {
    "cluster": ("certificate-authority",),
    "user": ("client-certificate", "client-key", "tokenFile"),
}


def kubeconfig_files(explicit: Path | None) -> list[Path]:
    """The files kubectl would read: --kubeconfig alone, else every existing $KUBECONFIG entry,
    else ~/.kube/config (empty when none exists: in-cluster configuration applies)."""
    if explicit is not None:
        return [explicit]
    listed = [Path(p).expanduser() for p in os.environ.get("KUBECONFIG", "").split(os.pathsep) if p]
    found = [p for p in listed if p.is_file()]
    if found or listed:
        return found
    default = Path("~/.kube/config").expanduser()
    return [default] if default.is_file() else []


def read_kubeconfig(path: Path) -> Any:
    """A kubeconfig file's YAML document: at most MAX_DOC_BYTES read, aliases and nesting
    bounded (limits.bounded_yaml). A file past a limit is a UsageError naming it (exit 2);
    OSError and yaml.YAMLError are the caller's to word."""
    from gpunode.bounded import TooLarge, read_whole
    from gpunode.limits import MAX_DOC_BYTES, bounded_yaml

    try:
        text = read_whole(path, MAX_DOC_BYTES, "a kubeconfig").decode(errors="replace")
        return bounded_yaml(text, f"{path}: not a kubeconfig")
    except (TooLarge, ValueError) as exc:  # past a limit: its own line names the file
        raise UsageError(str(exc)) from None


def merged(files: list[Path]) -> dict[str, Any]:
    """One kubeconfig dict from several files, by kubectl's first-wins rules."""
    import yaml

    out: dict[str, Any] = {"clusters": [], "users": [], "contexts": []}
    seen: dict[str, set[str]] = {section: set() for section, _ in _SECTIONS}
    for path in files:
        try:
            doc = read_kubeconfig(path) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise UsageError(f"{path}: not a readable kubeconfig: {exc}") from exc
        if not isinstance(doc, dict):
            raise UsageError(f"{path}: not a kubeconfig (expected a mapping)")
        if doc.get("current-context") and "current-context" not in out:
            out["current-context"] = doc["current-context"]
        for section, key in _SECTIONS:
            for entry in doc.get(section) or ():
                name = entry.get("name") if isinstance(entry, dict) else None
                if name is None or name in seen[section]:
                    continue
                seen[section].add(name)
                out[section].append(_absolute(entry, key, path.parent))
    return out


def _absolute(entry: dict[str, Any], key: str, base: Path) -> dict[str, Any]:
    body = dict(entry.get(key) or {})
    for field in _PATH_KEYS.get(key, ()):
        value = body.get(field)
        if isinstance(value, str) and value and not Path(value).expanduser().is_absolute():
            body[field] = str(base / value)
    return {**entry, key: body}


def context_names(explicit: Path | None = None) -> list[str]:
    """Every context name, for shell completion."""
    files = kubeconfig_files(explicit)
    return [c["name"] for c in merged(files)["contexts"]] if files else []
