"""Kubernetes ``Status`` error bodies, the shape every client parses on failure."""

from __future__ import annotations

from typing import Any

import msgspec

REASONS: dict[int, str] = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    406: "NotAcceptable",
    410: "Expired",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
}


def status_object(code: int, message: str, *, reason: str | None = None,
                  details: dict[str, Any] | None = None) -> dict[str, Any]:
    """A ``Status`` with ``status: Failure`` (success Statuses are built inline)."""
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason or REASONS.get(code, "Unknown"),
    }
    if details:
        body["details"] = details
    body["code"] = code
    return body


def status_bytes(code: int, message: str, *, reason: str | None = None,
                 details: dict[str, Any] | None = None) -> bytes:
    return msgspec.json.encode(status_object(code, message, reason=reason, details=details))


def not_found(kind_plural: str, name: str, group: str = "") -> bytes:
    qualified = f"{kind_plural}.{group}" if group else kind_plural
    details = {"name": name, "group": group, "kind": kind_plural}
    if not group:
        del details["group"]
    return status_bytes(404, f'{qualified} "{name}" not found', details=details)


def forbidden(user: str, verb: str, resource: str, *, group: str, namespace: str,
              name: str = "") -> bytes:
    """The RBAC denial message, word for word in the API server's form."""
    scope = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
    plural = resource.split("/", maxsplit=1)[0]
    subject = f'{plural} "{name}"' if name else plural
    message = (f'{subject} is forbidden: User "{user}" cannot {verb} resource "{resource}" '
               f'in API group "{group}" {scope}')
    details: dict[str, Any] = {"kind": plural}
    if name:
        details["name"] = name
    return status_bytes(403, message, details=details)
