"""kubeconfig exec credential plugins (``users[].user.exec``), run once, with a deadline.

lightkube runs the plugin inside each request's authentication with no timeout and
hands it the terminal's stdin: a plugin waiting for a login, or hung on its own
network call, kept gpunode waiting for ever whatever ``--request-timeout`` said. Here
the plugin runs once before the first request, in its own process group, with no
stdin (``KUBERNETES_EXEC_INFO`` tells it the session is not interactive, as kubectl
does), its output bounded, and is killed with its children when its time is up; the
token (or client certificate) it prints replaces the ``exec`` entry for the run. Any
failure is one line naming the plugin and the kubeconfig user (exit 3: no usable
credentials). The token is fetched once per run: it is not fetched again on a 401.

An ``exec`` entry kubectl would refuse is refused as kubectl refuses it, before anything
runs, as a local error (exit 2): an apiVersion other than ``v1`` and ``v1beta1`` (kubectl
dropped ``v1alpha1``), ``v1`` without ``interactiveMode``, ``interactiveMode: Always``
(gpunode gives a plugin no terminal, as kubectl with no terminal on stdin), and a plugin
binary that does not exist.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import selectors
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import msgspec
from lightkube.config.kubeconfig import SingleConfig
from lightkube.config.models import UserExec

from gpunode.errors import SourceUnreachable, UsageError

#: How long a credential plugin may take without ``--request-timeout`` (a cloud CLI that
#: refreshes its token answers in a few seconds).
PLUGIN_TIMEOUT_S = 30.0
#: What a plugin may print: an ExecCredential is a few KiB (a client certificate and key).
MAX_PLUGIN_OUTPUT = 1024 * 1024
MAX_PLUGIN_STDERR = 64 * 1024
_V1 = "client.authentication.k8s.io/v1"
_API_VERSIONS = (_V1, "client.authentication.k8s.io/v1beta1")
_MODES = ("Never", "IfAvailable", "Always")


class _Status(msgspec.Struct):
    token: str | None = None
    clientCertificateData: str | None = None  # the API's field names
    clientKeyData: str | None = None


class _ExecCredential(msgspec.Struct):
    kind: str = ""
    status: _Status | None = None


_DECODER = msgspec.json.Decoder(_ExecCredential)


def plugin_credentials(config: SingleConfig, timeout_s: float) -> SingleConfig:
    """``config`` with its exec plugin's answer in place of the plugin (unchanged without
    one); SourceUnreachable naming the plugin when it fails, prints no credential, or does
    not answer within ``timeout_s``."""
    user = config.user
    if user is None or user.exec is None:
        return config
    plugin = user.exec
    who = _who(config, plugin)
    ran = _run(who, _argv(config, plugin), _env(plugin), timeout_s, plugin.installHint)
    status = _status(who, ran)
    if status.token:
        replaced = msgspec.structs.replace(user, exec=None, token=status.token, token_file=None)
    else:
        assert status.clientCertificateData and status.clientKeyData
        replaced = msgspec.structs.replace(
            user, exec=None, token=None, token_file=None,
            client_cert=None, client_cert_data=_b64(status.clientCertificateData),
            client_key=None, client_key_data=_b64(status.clientKeyData))
    return config._replace(user=replaced)


def check_exec(config: SingleConfig, written: dict[str, object]) -> None:
    """UsageError (exit 2) for an ``exec`` entry kubectl would refuse (``written``: the entry
    as the kubeconfig holds it, ``interactiveMode`` included)."""
    user = config.user
    if user is None or user.exec is None:
        return
    plugin, who = user.exec, _who(config, user.exec)
    if plugin.apiVersion not in _API_VERSIONS:
        raise UsageError(f"{who}: invalid apiVersion {plugin.apiVersion!r} (kubectl and gpunode accept "
                         f"{' and '.join(_API_VERSIONS)})")
    mode = written.get("interactiveMode")
    if mode is None and plugin.apiVersion == _V1:
        raise UsageError(f"{who}: interactiveMode must be specified for {_V1} (Never, IfAvailable or "
                         "Always), as kubectl requires")
    if mode is not None and mode not in _MODES:
        raise UsageError(f"{who}: invalid interactiveMode {mode!r} (Never, IfAvailable or Always)")
    if mode == "Always":
        raise UsageError(f"{who}: interactiveMode Always needs a terminal, and gpunode runs credential "
                         "plugins without one (kubectl too when stdin is not a terminal): use "
                         "IfAvailable or Never, or log in with the plugin first")
    argv0 = _argv(config, plugin)[0]
    if shutil.which(argv0) is None:
        hint = f" ({_first_line(plugin.installHint.encode())})" if plugin.installHint else ""
        found = "is not executable" if Path(argv0).exists() else "not found"
        raise UsageError(f"{who} {found}{hint}")


def _who(config: SingleConfig, plugin: UserExec) -> str:
    return f"kubeconfig user {config.context.user or '?'}: credential plugin {plugin.command!r}"


def _b64(pem: str) -> str:
    """lightkube reads ``*-data`` fields as base64, as kubeconfig writes them; a plugin prints PEM."""
    return base64.b64encode(pem.encode()).decode()


def _argv(config: SingleConfig, plugin: UserExec) -> list[str]:
    """kubectl's rule: a command with a slash but not absolute is relative to the kubeconfig."""
    command = plugin.command
    if "/" in command and not Path(command).is_absolute() and config.fname is not None:
        command = str(Path(config.fname).parent / command)
    return [command, *(plugin.args or [])]


def _env(plugin: UserExec) -> dict[str, str]:
    env = dict(os.environ)
    env.update((var.name, var.value) for var in plugin.env or ())
    env["KUBERNETES_EXEC_INFO"] = json.dumps({
        "apiVersion": plugin.apiVersion, "kind": "ExecCredential", "spec": {"interactive": False}})
    return env


def _status(who: str, ran: _Ran) -> _Status:
    if ran.code != 0:
        said = _first_line(ran.stderr) or _first_line(ran.stdout) or "no message"
        raise SourceUnreachable(f"{who} exited {ran.code}: {said}")
    try:
        credential = _DECODER.decode(ran.stdout)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError) as exc:
        why = "nested too deeply" if isinstance(exc, RecursionError) else str(exc).splitlines()[0]
        raise SourceUnreachable(f"{who} printed no ExecCredential ({why})") from None
    status = credential.status
    if status is None or not (status.token or (status.clientCertificateData and status.clientKeyData)):
        raise SourceUnreachable(f"{who} printed an ExecCredential without a token or client certificate")
    return status


def _first_line(data: bytes) -> str:
    for line in data.decode(errors="replace").splitlines():
        if line.strip():
            return line.strip()[:300]
    return ""


@dataclass(frozen=True)
class _Ran:
    code: int
    stdout: bytes
    stderr: bytes


def _run(who: str, argv: list[str], env: dict[str, str], timeout_s: float,
         hint: str | None) -> _Ran:
    """The plugin's exit status and output, within ``timeout_s``; killed (with everything it
    started) when it takes longer or prints more than an ExecCredential could be."""
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=env, start_new_session=True)
    except OSError as exc:
        missing = isinstance(exc, FileNotFoundError)
        why = "not found" if missing else f"cannot start: {exc.strerror or exc}"
        tip = f" ({_first_line(hint.encode())})" if missing and hint else ""
        raise SourceUnreachable(f"{who} {why}{tip}") from None
    try:
        out, err = _read_until(proc, time.monotonic() + timeout_s, who, timeout_s)
    finally:
        _end(proc)
    return _Ran(proc.returncode, out, err)


def _read_until(proc: subprocess.Popen[bytes], ends: float, who: str,
                timeout_s: float) -> tuple[bytes, bytes]:
    """Both pipes until the plugin exits (then what it left in them); bounded in time and size."""
    assert proc.stdout is not None and proc.stderr is not None
    out, err = bytearray(), bytearray()
    with selectors.DefaultSelector() as watch:
        watch.register(proc.stdout, selectors.EVENT_READ, out)
        watch.register(proc.stderr, selectors.EVENT_READ, err)
        while watch.get_map():
            exited = proc.poll() is not None
            left = ends - time.monotonic()
            if left <= 0 and not exited:
                raise SourceUnreachable(
                    f"{who} did not answer within {timeout_s:g} s (stopped; it may be waiting for a "
                    "login: run it once by hand, or give more time with --request-timeout)")
            ready = watch.select(0 if exited else min(left, 0.1))
            if exited and not ready:
                break  # it is done; a child it left behind may hold the pipes open
            for key, _ in ready:
                chunk = os.read(key.fd, 64 * 1024)
                if not chunk:
                    watch.unregister(key.fileobj)
                    continue
                buffer: bytearray = key.data
                buffer += chunk
                if buffer is out and len(out) > MAX_PLUGIN_OUTPUT:
                    raise SourceUnreachable(f"{who} printed more than {MAX_PLUGIN_OUTPUT // 1024} KiB")
                del err[MAX_PLUGIN_STDERR:]
    left = max(ends - time.monotonic(), 0.0)
    try:
        proc.wait(timeout=left)
    except subprocess.TimeoutExpired:
        raise SourceUnreachable(f"{who} did not exit within {timeout_s:g} s") from None
    return bytes(out), bytes(err)


def _end(proc: subprocess.Popen[bytes]) -> None:
    """The plugin and everything it started gone (its own process group), pipes closed."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    for pipe in (proc.stdout, proc.stderr):
        if pipe is not None:
            pipe.close()
