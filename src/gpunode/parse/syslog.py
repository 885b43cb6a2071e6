"""The host's syslog, kept only where it speaks of the GPU driver's installation.

A host driver installed by configuration management or a provisioning script leaves its
words in the system log, not in a log of its own: the Puppet agent, cloud-init and
systemd units log to syslog (``/var/log/messages`` on RHEL and CentOS, ``/var/log/syslog`` on
Debian and Ubuntu). The probe keeps only the lines of the log's tail that name the GPU or
its driver (``nvidia``, ``cuda``, ``gpu``, ``vgpu`` as words, in any case: Puppet's
``Profile::Gpu::Install::Vgpu``, a package ``nvidia-driver-550``) after the line's time and
host (a GPU node is often named for its GPUs, and every line carries that name), so the rest
of the host's log (other services, users, addresses) is neither read nor kept.
"""

from __future__ import annotations

from gpunode.relazy import lazy_compile

#: The host's syslog files, RHEL's and Debian's.
SYSLOG_FILES = ("/var/log/messages", "/var/log/syslog")
#: How much of the log's end is read, and how much of what names the driver is kept.
SYSLOG_READ_BYTES = 4 * 1024 * 1024
SYSLOG_KEPT_BYTES = 64 * 1024
#: A line that names the GPU or its driver.
GPU_DRIVER_WORDS = lazy_compile(r"(?i)(?<![a-z0-9])(?:nvidia|cuda|v?gpu)")
#: syslog's time and host before the program's tag: the traditional "Feb  4 11:43:46 host "
#: (RFC 3164) and the ISO timestamp of RFC 5424 and rsyslog's high-precision format.
_TIME_AND_HOST = lazy_compile(
    r"^(?:[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d|\d{4}-\d\d-\d\dT\S+)\s+\S+\s+")


def names_gpu_driver(line: str) -> bool:
    """Whether a syslog line names the GPU or its driver, after its time and host."""
    head = _TIME_AND_HOST.match(line)
    return GPU_DRIVER_WORDS.search(line, head.end() if head else 0) is not None


def syslog_kept(text: str) -> str:
    """The lines of a syslog tail that name the GPU or its driver (the last
    ``SYSLOG_KEPT_BYTES`` of them); the first line is dropped where it may be cut."""
    lines = [line for line in text.splitlines()[1:] if names_gpu_driver(line)]
    kept: list[str] = []
    size = 0
    for line in reversed(lines):
        size += len(line) + 1
        if size > SYSLOG_KEPT_BYTES:
            break
        kept.append(line)
    return "".join(f"{line}\n" for line in reversed(kept))
