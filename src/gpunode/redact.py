"""Remove secrets from everything collected before it is written.

A bundle travels (to support, into tickets), so secrets are removed by name and
by the shape of the value, in every source collect writes: API objects (env
values, flags in args and commands, probe headers, custom resources, annotations),
ConfigMaps, events, logs, command output and node files (containerd registry
credentials). ``kubectl.kubernetes.io/last-applied-configuration`` is dropped: it
repeats the whole object, env values included. Objects in which nothing looks
secret keep their bytes exactly as the API returned them.

Every redaction is recorded as *what* and *where* (never the value), for the
manifest's ``redacted`` list.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from typing import Any

import msgspec

from gpunode.gpus import plugin_sharing
from gpunode.relazy import lazy_compile

try:
    import re2  # type: ignore[import-untyped]  # google-re2 ships no type information
except ImportError:  # pragma: no cover - the dependency is declared; stay usable without it
    re2 = None

REDACTED = "<redacted>"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"

#: Names (env variables, flags, header names, settings) whose values are secrets.
SENSITIVE = lazy_compile(
    r"(?i)(token|passw(or)?d|passwd|passphrase|secret|credential|api[-_]?key|private[-_]?key"
    r"|access[-_]?key|account[-_]?key|shared[-_]?access|signing[-_]?key|encryption[-_]?key"
    r"|master[-_]?key|license[-_]?key|client[-_]?key|signature"
    r"|(^|[-_.])(key|pass|pwd|pat|auth|creds?|pin|dsn|cookie|session|sig|salt)($|[-_.])"
    r"|^authorization$|^proxy-authorization$|^x-api-key$)")
#: Values that cannot be secrets however their variable is called.
_PLAIN = lazy_compile(r"(?i)(true|false|yes|no|on|off|none|null|enabled|disabled|\d{1,6}|)")
#: A setting named this way holds where a secret is, not the secret (``secretName``).
_REFERENCE_SUFFIXES = ("name", "ref", "refs", "secrets", "file", "path", "keyref", "selector",
                       "dir", "mount", "type", "length", "size", "count", "policy", "enabled",
                       "mode", "model", "format", "algorithm", "ttl", "expiry", "expires", "header", "url")
#: Setting names that say secret in prose too often to be taken as one (``key=nvidia.com/gpu``).
_TOO_PLAIN = frozenset({"key", "keys", "pin", "session", "sig", "salt", "pat"})

#: Tokens whose prefix says what they are (GitHub, GitLab, AWS, Slack, NGC, OpenAI and
#: Anthropic, Google, Hugging Face, npm, PyPI, Docker Hub, Stripe, SendGrid, Mailgun,
#: DigitalOcean, Vault, Shopify, Atlassian, Databricks, Grafana, New Relic, Postman, age).
_TOKEN_SHAPES = (
    r"gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|gl(?:pat|dt|rt|ptt|soat)-[A-Za-z0-9_-]{20,}"
    r"|GR1348941[A-Za-z0-9_-]{20,}|(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}"
    r"|xox[abposre]-[A-Za-z0-9-]{10,}|xapp-[0-9]-[A-Za-z0-9-]{10,}|nvapi-[A-Za-z0-9_-]{16,}"
    r"|sk-[A-Za-z0-9_-]{20,}|[sr]k_(?:live|test)_[0-9A-Za-z]{10,}|AIza[0-9A-Za-z_-]{35}"
    r"|ya29\.[0-9A-Za-z_-]{20,}|1//0[0-9A-Za-z_-]{20,}|hf_[A-Za-z0-9]{30,}|npm_[A-Za-z0-9]{30,}"
    r"|pypi-AgE[A-Za-z0-9_-]{30,}|dckr_pat_[A-Za-z0-9_-]{20,}|SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"
    r"|key-[0-9a-z]{32}|do[opr]_v1_[a-f0-9]{64}|hv[sbr]\.[A-Za-z0-9_-]{20,}|shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}"
    r"|ATATT3[A-Za-z0-9_=-]{30,}|dapi[0-9a-f]{32}|gl(?:sa|c)_[A-Za-z0-9_+/=-]{30,}|NRAK-[A-Z0-9]{27}"
    r"|PMAK-[0-9a-f]{24}-[0-9a-f]{34}|AGE-SECRET-KEY-1[0-9A-Z]{50,}|lin_api_[A-Za-z0-9]{30,}")
#: Webhook URLs carry their secret in the path: the host and first segment stay.
_WEBHOOK = (
    r"(?i)\b(https?://(?:hooks\.slack\.com/(?:services|workflows|triggers)|(?:[\w-]+\.)?discord(?:app)?\.com"
    r"/api/webhooks|[\w.-]*webhook\.office\.com/webhookb2|outlook\.office(?:365)?\.com/webhook"
    r"|hooks\.zapier\.com/hooks|events\.pagerduty\.com/integration|api\.telegram\.org"
    r"|[^\s/\"'<>]+/(?:[^\s\"'<>?#]*/)?(?:webhooks?|hooks))/)[^\s\"'<>\\]+")
#: A password given to a command on its line: ``mysql -psecret``, ``curl -u user:pw``,
#: ``htpasswd -b file user pw``, ``openssl -passin pass:pw``, ``sqlplus user/pw@db``,
#: ``kubectl create secret --from-literal=k=v``, ``echo pw | docker login --password-stdin``.
_COMMAND_PASSWORD = (
    r"(?i)(\b(?:mysql\w*|mariadb\w*|sshpass|mongo\w*|(?:docker|podman|buildah|skopeo|helm(?:\s+registry)?"
    r"|nerdctl|oras|crane)\s+login)\b[^\n;|&]{0,200}?\s-p\s*)(?!-)([^\s\"']{1,256})"
    r"|(\b(?:curl|wget)\b[^\n;|&]{0,200}?\s(?:-u|--user|--proxy-user)\s*[\"']?[^\s:\"']{1,128}:)"
    r"([^\s\"']{1,256})"
    r"|(\bhtpasswd\s+-\w*b\w*\s+\S+\s+\S+\s+)([^\s\"']{1,256})"
    r"|(\b(?:ldap\w+|redis-cli|sqlcmd|bcp)\b[^\n;|&]{0,200}?\s-[waP]\s*)(?!-)([^\s\"']{1,256})"
    r"|(\bpass:)([^\s\"']{1,256})"
    r"|(\b(?:sqlplus|rman|expdp|impdp)\s+[\w.$#-]{1,64}/)([^\s@/\"']{1,256})(?=@)"
    r"|(--from-literal=[^=\s]{1,128}=)([^\s\"']{1,512})"
    r"|(\becho\s+)([\"']?[^\s|\"'$]{1,256}[\"']?)(?=\s*\|\s*(?:sudo\s+)?\S*(?:docker|podman|helm|nerdctl"
    r"|buildah|skopeo|oras|crane|chpasswd|passwd)\b)")
#: ``NAME = value``, ``NAME: value``, ``"name": "value"``, ``NAME=value`` in a shell line or a
#: query string: the value is a secret when the name says so (SENSITIVE).
_SETTING = lazy_compile(
    r"(?<![\w.-])([A-Za-z_][\w.-]{0,80})(\\?[\"']?\s*(?:=|:(?!//))\s*)"
    r"(?=(\\\"[^\"\\\n]{1,2048}\\\"|\"[^\"\n]{1,2048}\"|'[^'\n]{1,2048}'|[^\s\"'\\,;&|<>(){}\[\]]{1,512}))")


class _Settings:
    """``_SETTING``'s substitution: only the name and separator are consumed by a match, so a
    value that holds another setting (``image: TOKEN=x``, ``url=...?token=x``) is searched too."""

    def sub(self, _replacement: object, text: str) -> str:
        out: list[str] = []
        pos = 0
        for match in _SETTING.finditer(text):
            if match.start() < pos:
                continue  # inside a value already replaced
            name, sep, value = match.group(1), match.group(2), match.group(3)
            query = match.start() > 0 and text[match.start() - 1] in "?&" and sep == "="
            if not _secret_setting(name, value, query):
                continue
            quote = value[:2] if value.startswith('\\"') else value[:1] if value[:1] in "\"'" else ""
            out += [text[pos:match.end()], quote, REDACTED, quote]
            pos = match.end() + len(value)
        return "".join(out) + text[pos:] if out else text


def _secret_setting(name: str, value: str, query: bool = False) -> bool:
    """``query``: a URL's query parameter, where even short names (``sig``) are secrets."""
    bare = value.strip("\\\"'")
    lowered = name.lower().rstrip(".-_")
    if not bare or _PLAIN.fullmatch(bare) or bare.startswith(("<", "$", "%", "{{")) or bare == REDACTED:
        return False
    if (lowered in _TOO_PLAIN and not query) or lowered.endswith(_REFERENCE_SUFFIXES):
        return False
    return is_sensitive(name)


def _groups(match: re.Match[str]) -> str:
    """Keep the odd groups of an alternation (what leads to the secret), redact the even."""
    groups = match.groups()
    for lead in range(0, len(groups), 2):
        if groups[lead] is not None:
            return f"{groups[lead]}{REDACTED}"
    return REDACTED


Replacement = str | Callable[[re.Match[str]], str]

#: Value shapes that are secrets wherever they appear (name, pattern, replacement).
_SHAPES: tuple[tuple[str, re.Pattern[str] | _Settings, Replacement], ...] = (
    ("private key", lazy_compile(r"-----BEGIN [A-Z ]{0,40}PRIVATE KEY(?: BLOCK)?-----[\s\S]{0,20000}?"
                                 r"(-----END [A-Z ]{0,40}PRIVATE KEY(?: BLOCK)?-----|$)"), REDACTED),
    ("authorization header", lazy_compile(r"(?i)\b((?:proxy-)?authorization\s*[:=]\s*)"
                                          r"(?:(bearer|basic|token|digest|negotiate)\s+)?[^\s\"'\\,;]{4,}"),
     rf"\1\2 {REDACTED}"),
    ("bearer token", lazy_compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}"), rf"\1 {REDACTED}"),
    ("password in URL", lazy_compile(
        r"(?i)\b([a-z][a-z0-9+.-]{1,20}://[^\s/:@\"'<>]{0,256}:)[^\s/@\"'<>]{1,256}@"), rf"\1{REDACTED}@"),
    ("token in URL", lazy_compile(r"(?i)\b([a-z][a-z0-9+.-]{1,20}://)[A-Za-z0-9_~.-]{20,256}@"),
     rf"\1{REDACTED}@"),
    ("webhook URL", lazy_compile(_WEBHOOK), rf"\1{REDACTED}"),
    ("JSON web token", lazy_compile(
        r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{4,}"), REDACTED),
    ("access token", lazy_compile(rf"\b({_TOKEN_SHAPES})"), REDACTED),
    ("password on a command line", lazy_compile(_COMMAND_PASSWORD), _groups),
    ("secret flag", lazy_compile(
        r"(?i)(--?[\w.-]{0,40}(?:passw(?:or)?d|passwd|pwd|token|secret|api[-_]?key|credentials?)"
        r"[\w.-]{0,40})(=|\s+)(?!-)(\\?\"[^\"\\\s]{1,512}\\?\"|'[^'\s]{1,512}'|[^\s\"'\\,;]{1,512})"),
     rf"\1\2{REDACTED}"),
    ("secret setting", _Settings(), ""),
)


def is_sensitive(name: str) -> bool:
    return bool(SENSITIVE.search(name))


def redact_text(text: str, found: list[str] | None = None) -> str:
    """``text`` with every secret-shaped value replaced; rule names appended to ``found``."""
    if not _text_trigger(text):
        return text
    folded = text.lower() if text.isascii() else None
    for name, pattern, replacement in _SHAPES:
        if not _may_match(name, text, folded):
            continue
        changed = pattern.sub(replacement, text)
        if changed != text and found is not None:
            found.append(name)
        text = changed
    return text


_TRIGGERS = (
    r"(?i)pass|pwd|token|secret|cred|auth|bearer|basic |api.?key|access.?key|private|key|sig|salt"
    r"|cookie|session|dsn|://[^\s/]*@|hook|eyJ|gh[pousr]_|github_pat_|gl[a-z]{1,4}[-_]|GR1348941"
    r"|A[KSGIRN][IPDON]A|xox|xapp-|nvapi-|sk[-_]|rk_|AIza|ya29\.|1//0|hf_|npm_|pypi-|dckr_|SG\.|do[opr]_v1"
    r"|hv[sbr]\.|shp|ATATT|dapi|NRAK-|PMAK-|AGE-SECRET|lin_api_|-p|-u |--user|-[waP] |from-literal"
    r"|/\S*@|echo |telegram|bot\d")
_TEXT_TRIGGER = lazy_compile(_TRIGGERS)


def redact_bytes(data: bytes, where: str, log: list[str] | None = None) -> bytes:
    """Text output (logs, command output, node files) with secret shapes replaced."""
    if not _bytes_trigger(data):
        return data
    found: list[str] = []
    text = redact_text(data.decode("utf-8", errors="surrogateescape"), found)
    if not found:
        return data
    if log is not None:
        log.extend(f"{where}: {name}" for name in dict.fromkeys(found))
    return text.encode("utf-8", errors="surrogateescape")


_BYTES_TRIGGER = lazy_compile(_TEXT_TRIGGER.pattern.encode())


def _fast(pattern: re.Pattern[Any]) -> Callable[[Any], object]:
    r"""``pattern.search``, by RE2 when installed: the triggers are alternations of literals
    that Python's ``re`` tries branch by branch at every position (a 100,000-pod list took
    30 s of CPU to scan; RE2's automaton, 0.2 s). They are prefilters: RE2's ASCII ``\s``
    in a negated class only widens what they match, so nothing a trigger catches is missed."""
    if re2 is None:
        return pattern.search
    search: Callable[[Any], object] = re2.compile(pattern.pattern).search
    return search


# --- API objects -------------------------------------------------------------------------

_OBJECT_TRIGGER = lazy_compile(
    rb"(?i)pass|pwd|token|secret|cred|auth|bearer|basic |apikey|api_key|api-key|_key\"|key_|private|"
    rb"last-applied|://[^\s/\"]*@|eyJ|gh[pousr]_|github_pat_|gl[a-z]{1,4}[-_]|GR1348941|A[KSGIRN][IPDON]A|"
    rb"xox|xapp-|nvapi-|sk[-_]|rk_|AIza|ya29\.|1//0|hf_|npm_|pypi-|dckr_|SG\.|do[opr]_v1|hv[sbr]\.|shp|"
    rb"ATATT|dapi|NRAK-|PMAK-|AGE-SECRET|lin_api_|hook|signature|accountkey|account_key|sharedaccess|"
    rb"from-literal|-u |--user|echo |_pat[^h]|pat_|\"-p| -p|cookie|session|dsn|salt|sig=|mysql|mariadb|"
    rb"sshpass|mongo|login|curl|wget|htpasswd|ldap|redis-cli|sqlcmd|pass:|sqlplus|telegram")
# _pat but not _path (probe facts are full of paths)
_text_trigger = _fast(_TEXT_TRIGGER)
#: Rules costly to try at every position, tried only where what begins every match is
#: present. The word boundaries keep words inside others out (``performance`` is no
#: ``rman``: a whole nvidia-smi XML report paid the command-line scan for it); RE2's ASCII
#: ``\b`` before a word character stands wherever Python's stands, so nothing is missed.
_RULE_TRIGGERS: dict[str, Callable[[Any], object]] = {
    "password on a command line": _fast(lazy_compile(
        r"(?i)\b(?:mysql|mariadb|sshpass|mongo|login|curl|wget|htpasswd|ldap|redis-cli|sqlcmd|bcp"
        r"|pass:|sqlplus|rman|expdp|impdp|echo)|from-literal")),
    "access token": _fast(lazy_compile(rf"\b(?:{_TOKEN_SHAPES})")),
}
#: Rules whose every match holds one of these words (caseless: matched in any case), so a
#: text without any skips the rule's scan; most logs and command output hold none.
_RULE_WORDS: dict[str, tuple[tuple[str, ...], bool]] = {
    "private key": (("PRIVATE KEY",), False),
    "authorization header": (("authorization",), True),
    "bearer token": (("bearer", "basic"), True),
    "password in URL": (("://",), False),
    "token in URL": (("://",), False),
    "webhook URL": (("://",), False),
    "JSON web token": (("eyJ",), False),
    "secret flag": (("passw", "pwd", "token", "secret", "api", "credential"), True),
}


def _may_match(name: str, text: str, folded: str | None) -> bool:
    """Whether rule ``name`` can match ``text`` (``folded``: the text in lower case when it
    is ASCII). Skipping a rule that cannot match changes nothing and saves its scan, which
    Python's ``re`` runs at every position. A caseless rule is always tried on non-ASCII
    text: Python's caseless match pairs ``\u0131`` with ``i`` and ``\u212a`` with ``k``,
    which lower-casing does not."""
    trigger = _RULE_TRIGGERS.get(name)
    if trigger is not None:
        return bool(trigger(text))
    needs = _RULE_WORDS.get(name)
    if needs is None:
        return True
    words, caseless = needs
    if caseless and folded is None:
        return True
    haystack = folded if caseless and folded is not None else text
    return any(word in haystack for word in words)
_bytes_trigger = _fast(_BYTES_TRIGGER)
_object_trigger = _fast(_OBJECT_TRIGGER)
_ARG_LISTS = ("args", "command")


def redact_item(item: bytes, where: str = "", log: list[str] | None = None) -> bytes:
    """One API object's JSON with secrets removed; untouched objects keep their bytes."""
    if not _object_trigger(item):
        return item
    obj = msgspec.json.decode(item)
    found: list[str] = []
    _walk(obj, "", found)
    if not found:
        return item
    if log is not None:
        label = _label(obj)
        log.extend(f"{where}{' ' + label if label else ''}: {f}" for f in dict.fromkeys(found))
    return msgspec.json.encode(obj)


def _label(obj: Any) -> str:
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    if not isinstance(meta, dict):
        return ""
    kind = obj.get("kind", "")
    name = "/".join(str(meta[k]) for k in ("namespace", "name") if meta.get(k))
    return f"{kind} {name}".strip()


def _walk(obj: Any, path: str, found: list[str]) -> None:
    if isinstance(obj, dict):
        _walk_dict(obj, path, found)
    elif isinstance(obj, list):
        for index, value in enumerate(obj):
            if isinstance(value, str):
                clean = redact_text(value)
                if clean != value:
                    obj[index] = clean
                    found.append(f"{path}[{index}]")
            else:
                _walk(value, f"{path}[{index}]", found)


def _walk_dict(obj: dict[str, Any], path: str, found: list[str]) -> None:
    if LAST_APPLIED in obj:
        del obj[LAST_APPLIED]
        found.append(f"{path}.annotations[{LAST_APPLIED}] (dropped)" if path.endswith("metadata")
                     else f"{path}[{LAST_APPLIED}] (dropped)")
    name = obj.get("name")
    if isinstance(name, str) and isinstance(obj.get("value"), str) and _secret_value(name, obj["value"]):
        obj["value"] = REDACTED
        found.append(f"{path}[{name}]")
    for key, value in obj.items():
        here = f"{path}.{key}"
        if isinstance(value, str):
            if key != "value" and _secret_key(key) and not _PLAIN.fullmatch(value):
                obj[key] = REDACTED
                found.append(here)
                continue
            clean = redact_text(value)
            if clean != value:
                obj[key] = clean
                found.append(here)
        elif key in _ARG_LISTS and isinstance(value, list) and all(isinstance(a, str) for a in value):
            redacted = redact_args(value)
            if redacted != value:
                obj[key] = redacted
                found.append(here)
        else:
            _walk(value, here, found)


def _secret_value(name: str, value: str) -> bool:
    return value != REDACTED and is_sensitive(name) and not _PLAIN.fullmatch(value)


def _secret_key(key: str) -> bool:
    """A field whose own name says secret (``password: x``), not a reference to one."""
    lowered = key.lower()
    return is_sensitive(key) and not lowered.endswith(_REFERENCE_SUFFIXES) and lowered not in ("key", "keys")


def redact_args(args: list[str]) -> list[str]:
    """``--secret=x``, ``--secret x``, ``-p x``/``-px`` and secret shapes in any argument."""
    out: list[str] = []
    hide_next = False
    for arg in args:
        if hide_next and not arg.startswith("-"):
            out.append(REDACTED)
            hide_next = False
            continue
        flag, eq, _value = arg.partition("=")
        sensitive = arg.startswith("-") and (is_sensitive(flag.lstrip("-")) or flag == "-p")
        if arg.startswith("-p") and len(arg) > 2 and not arg.startswith("--") and not eq:
            out.append(f"-p{REDACTED}")  # mysql -psecret
            hide_next = False
            continue
        out.append(f"{flag}={REDACTED}" if sensitive and eq else redact_text(_short_p(arg)))
        hide_next = sensitive and not eq
    return out


_SHORT_P = lazy_compile(r"(^|\s)-p\s*(?!-)([^\s\"']{1,256})")


def _short_p(text: str) -> str:
    """``mysql -u root -p secret`` inside a shell string."""
    return _SHORT_P.sub(rf"\1-p {REDACTED}", text) if " -p" in text or text.startswith("-p") else text


def redact_pod(item: bytes) -> bytes:
    """A Pod's JSON with secrets removed (kept for callers of the older name)."""
    return redact_item(item)


def redact_workload(item: bytes) -> bytes:
    """The same for a DaemonSet/Deployment (the pod spec sits in spec.template)."""
    return redact_item(item)


def redact_pod_spec(spec: dict[str, Any]) -> None:
    """In place, for a decoded pod spec."""
    _walk(spec, "spec", [])


# --- ConfigMaps ----------------------------------------------------------------------------

#: ConfigMaps whose data the checks read: the GPU stack's own configuration.
STACK_CONFIGMAP = lazy_compile(
    r"(?i)(nvidia|gpu|mig|device-plugin|dcgm|time-slicing|timeslicing|toolkit|nfd|node-feature"
    r"|network-operator|rdma|sriov|mofed|ofed|cdi|gpunode)")
NOT_COLLECTED = "<not collected>"


def redact_configmap(item: bytes, where: str = "", log: list[str] | None = None,
                     plugin: Collection[tuple[str, str]] = ()) -> bytes:
    """A ConfigMap: data of the GPU stack's ConfigMaps (secrets removed); others keep their
    keys only, values not collected. ``plugin``: (namespace, name) of the device plugin's
    config ConfigMaps, whatever their name: of those only device-plugin configs are kept."""
    obj = msgspec.json.decode(item)
    meta = obj.get("metadata") or {}
    name = str(meta.get("name", ""))
    found: list[str] = []
    if (str(meta.get("namespace", "")), name) in plugin and not STACK_CONFIGMAP.search(name):
        _keep_plugin_configs(obj, found)
    elif not STACK_CONFIGMAP.search(name):
        for section in ("data", "binaryData"):
            values = obj.get(section)
            if isinstance(values, dict) and values:
                obj[section] = dict.fromkeys(values, NOT_COLLECTED)
                found.append(f".{section} (not a GPU-stack ConfigMap: values not collected)")
    _walk(obj, "", found)
    if not found:
        return item
    if log is not None:
        label = _label(obj) or f"ConfigMap {name}"
        log.extend(f"{where} {label}: {f}" for f in dict.fromkeys(found))
    return msgspec.json.encode(obj)


def _keep_plugin_configs(obj: dict[str, Any], found: list[str]) -> None:
    """In place: values that are device-plugin config files stay, the rest is not collected."""
    data = obj.get("data")
    if isinstance(data, dict):
        dropped = [k for k, v in data.items() if not isinstance(v, str) or plugin_sharing(v) is None]
        data.update(dict.fromkeys(dropped, NOT_COLLECTED))
        if dropped:
            found.append(".data (not a device-plugin config: values not collected)")
    if obj.get("binaryData"):
        obj["binaryData"] = dict.fromkeys(obj["binaryData"], NOT_COLLECTED)
        found.append(".binaryData (not a device-plugin config: values not collected)")


Redactor = Callable[[bytes, str, "list[str] | None"], bytes]
