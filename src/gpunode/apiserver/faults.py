"""Injectable failures, so clients can be tested against a misbehaving API server.

Counting faults ("every Nth request") are deterministic: a test knows that a
retry will succeed, and a benchmark sees the same failures on every run.
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase

#: What an ``answers`` rule may answer instead of the real response.
ANSWER_CODES = frozenset({401, 403, 404, 410, 429, 500, 502, 503, 504})
ANSWER_WORDS = frozenset({"hang", "cut", "garble", "stall", "stall-later", "stall-body",
                          "whole", "endless", "html", "redirect"})
#: Where a ``redirect`` answer sends the client, and the page an ``html`` answer serves.
REDIRECT_TO = "https://login.example.invalid/sso?return=/api"
LOGIN_PAGE = (b"<!DOCTYPE html><html><head><title>Sign in</title></head>"
              b"<body><form action=\"/sso\">Sign in to continue</form></body></html>")
#: Answers that apply only to a list page asked with a continue token.
LATER_PAGES_ONLY = frozenset({"410", "stall-later"})


@dataclass(frozen=True)
class Answer:
    """One parsed ``answers`` rule: what to answer, for which requests, how many times."""

    index: int
    what: str
    limit: int
    rule: str

    @property
    def code(self) -> int:
        return int(self.what) if self.what.isdigit() else 0


@dataclass(frozen=True)
class Faults:
    """What to break. Zero/empty means off.

    ``forbid`` holds RBAC-style rules ``"<verb> <resource>[/<subresource>] [<namespace>]"``
    answered with 403, e.g. ``"create pods/exec"``, ``"get pods/proxy"``, ``"list events"``;
    ``*`` works as a wildcard for either part. A third word limits the rule to one
    namespace (``*``: any), or with ``-`` to cluster-wide requests (``"list pods -"``: a
    reader bound by RoleBindings only, who may list pods in some namespaces but not
    across all). A fourth word is a glob on the object's name (for a subresource the
    pod's; a proxy's is ``pod:port``), e.g. ``"create pods/exec * nvidia-driver-*"``.

    ``answers`` holds rules ``"<answer>[xN] <verb> <resource> [<namespace>|-]"`` (the
    same matching) for requests that would otherwise succeed. The answer is an HTTP
    code from ``ANSWER_CODES`` (a Status body, ``429`` with Retry-After; ``410`` only on
    a list page asked with a continue token: the token expired mid-pagination), ``hang``
    (wait ``hang_s`` before answering: an endpoint slower than the client's timeout), ``cut`` (announce the
    whole body, send half of it and close: a connection lost mid-body) or ``garble``
    (half of the body sent as the whole answer: JSON cut off by a broken proxy),
    ``stall`` (accept the request and never answer, until the server stops),
    ``stall-later`` (the same, only for a list page asked with a continue token) or
    ``stall-body`` (announce the whole body, send half of it and then nothing more; an
    exec sends its output but never its exit status: a command that hangs).
    ``whole`` (a list answered whole, its ``limit`` ignored) or ``endless`` (a list page
    of no items whose continue token is the one asked with: pagination that never ends; an
    exec's stdout without end and never its exit status: a command that writes for ever),
    ``html`` (200 with an HTML login page, as an SSO proxy in front of the API answers) or
    ``redirect`` (302 to a login page on another host, ``REDIRECT_TO``).
    ``xN`` applies the rule to the first N requests it matches only, e.g.
    ``"500x2 list events"``, ``"410x1 list pods"``.
    """

    latency_s: float = 0.0
    too_many_every: int = 0
    retry_after_s: int = 1
    error_500_every: int = 0
    drop_every: int = 0
    forbid: tuple[str, ...] = ()
    answers: tuple[str, ...] = ()
    hang_s: float = 5.0

    def __post_init__(self) -> None:
        self.parsed_answers()  # a typo in a rule fails where the faults are made

    def is_forbidden(self, verb: str, resource: str, namespace: str = "", name: str = "") -> bool:
        return any(_rule_matches(rule, verb, resource, namespace, name) for rule in self.forbid)

    def action_for(self, request_number: int) -> str | None:
        """``"429"``, ``"500"``, ``"drop"`` or None for the n-th counted request (1-based)."""
        for every, action in ((self.drop_every, "drop"), (self.too_many_every, "429"),
                              (self.error_500_every, "500")):
            if every and request_number % every == 0:
                return action
        return None

    def parsed_answers(self) -> tuple[Answer, ...]:
        return tuple(_parse_answer(i, rule) for i, rule in enumerate(self.answers))

    def answers_for(self, verb: str, resource: str, namespace: str,
                    continued: bool, name: str = "") -> list[Answer]:
        """The ``answers`` rules matching one request, in the order given."""
        return [a for a in self.parsed_answers()
                if _rule_matches(a.rule, verb, resource, namespace, name)
                and (a.what not in LATER_PAGES_ONLY or (verb == "list" and continued))]


def _parse_answer(index: int, rule: str) -> Answer:
    head, _, rest = rule.strip().partition(" ")
    what, _, times = head.partition("x")
    if not times.isdigit() and times:
        raise ValueError(f"fault rule {rule!r}: the count after x must be a number")
    known = what in ANSWER_WORDS or (what.isdigit() and int(what) in ANSWER_CODES)
    if not known or len(rest.split()) < 2:
        raise ValueError(f"fault rule {rule!r}: expected '<answer>[xN] <verb> <resource> "
                         f"[namespace]', answer one of {sorted(ANSWER_WORDS)} or "
                         f"{sorted(ANSWER_CODES)}")
    return Answer(index, what, int(times) if times else 0, rest)


def _rule_matches(rule: str, verb: str, resource: str, namespace: str, name: str = "") -> bool:
    words = rule.split()
    if len(words) < 2:
        return False
    rule_verb, rule_resource, *scope = words
    if scope and scope[0] not in ("*", namespace or "-"):
        return False
    if len(scope) > 1 and not fnmatchcase(name, scope[1]):
        return False
    return rule_verb in ("*", verb) and rule_resource in ("*", resource)
