"""Go's os/exec looking up a program by a path: ``exec.LookPath`` stats a name that holds a
slash and wraps the stat error as 'exec: "<name>": stat <name>: no such file or directory'
(src/os/exec/lp_unix.go), which runc relays when a container's entrypoint is not in its image.
The program asked for is not there: the class of a name looked up in PATH and not found
("executable file not found in $PATH"), not a file in the wrong state. A file a program
opened, or a stat outside the lookup's wrapper, keeps the errno's own class.

Sources: k8snetworkplumbingwg/sriov-network-device-plugin#92 (a template running /bin/bash in
an Alpine image), open-telemetry/opentelemetry-helm-charts#176 (a collector image without the
binary the chart runs)."""

from __future__ import annotations

import pytest

from gpunode.kb import load_kb

MISSING = {
    "escaped": ('failed to start container "sriov-device-plugin": Error response from daemon: OCI runtime '
                'create failed: container_linux.go:348: starting container process caused "exec: '
                '\\"/bin/bash\\": stat /bin/bash: no such file or directory": unknown'),
    "plain": ('OCI runtime create failed: container_linux.go:380: starting container process caused: '
              'exec: "/otelcol-contrib": stat /otelcol-contrib: no such file or directory: unknown'),
}

LOOK_ALIKES = {
    "opened": "failed to load config: open /etc/plugin/config.json: no such file or directory",
    "bare-stat": "error: stat /run/nvidia/driver/usr/bin/nvidia-smi: no such file or directory",
    "other-name": 'exec: "/bin/sh": stat /bin/bash: no such file or directory',
}


@pytest.mark.parametrize("name", sorted(MISSING))
def test_a_program_the_lookup_did_not_find_is_not_found(name: str) -> None:
    assert load_kb().class_of(MISSING[name]) == "error_not_found"


@pytest.mark.parametrize("name", sorted(LOOK_ALIKES))
def test_a_file_outside_the_lookup_keeps_its_errno_class(name: str) -> None:
    assert load_kb().class_of(LOOK_ALIKES[name]) == "error_file_state"
