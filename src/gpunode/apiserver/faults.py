"""Injectable failures, so clients can be tested against a misbehaving API server.

Counting faults ("every Nth request") are deterministic: a test knows that a
retry will succeed, and a benchmark sees the same failures on every run.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Faults:
    """What to break. Zero/empty means off.

    ``forbid`` holds RBAC-style rules ``"<verb> <resource>[/<subresource>] [<namespace>]"``
    answered with 403, e.g. ``"create pods/exec"``, ``"get pods/proxy"``, ``"list events"``;
    ``*`` works as a wildcard for either part. A third word limits the rule to one
    namespace, or with ``-`` to cluster-wide requests (``"list pods -"``: a reader bound
    by RoleBindings only, who may list pods in some namespaces but not across all).
    """

    latency_s: float = 0.0
    too_many_every: int = 0
    retry_after_s: int = 1
    error_500_every: int = 0
    drop_every: int = 0
    forbid: tuple[str, ...] = ()

    def is_forbidden(self, verb: str, resource: str, namespace: str = "") -> bool:
        return any(_rule_matches(rule, verb, resource, namespace) for rule in self.forbid)

    def action_for(self, request_number: int) -> str | None:
        """``"429"``, ``"500"``, ``"drop"`` or None for the n-th counted request (1-based)."""
        for every, action in ((self.drop_every, "drop"), (self.too_many_every, "429"),
                              (self.error_500_every, "500")):
            if every and request_number % every == 0:
                return action
        return None


def _rule_matches(rule: str, verb: str, resource: str, namespace: str) -> bool:
    words = rule.split()
    if len(words) < 2:
        return False
    rule_verb, rule_resource, *scope = words
    if scope and scope[0] != (namespace or "-"):
        return False
    return rule_verb in ("*", verb) and rule_resource in ("*", resource)
