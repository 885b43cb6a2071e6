"""A shell reading a program as its script (gpunode.kb, KnowledgeBase.line_class): an image that
declares its binary as CMD under a shell entrypoint hands the ELF file to the shell, which stops
on line 1 (Mellanox/k8s-rdma-shared-dev-plugin#218, fixed by declaring ENTRYPOINT in #229). That
is how the image starts the program, not a configuration it read, so the line takes no class;
a script's or a configuration file's syntax error keeps the configuration class."""

from __future__ import annotations

from gpunode.kb import load_kb

KB = load_kb()


def test_a_program_read_by_the_shell_takes_no_class() -> None:
    for line in (
        '/bin/k8s-rdma-shared-dp: line 1: syntax error: unexpected ")"',  # busybox ash (#218)
        '/usr/bin/nvidia-device-plugin: 1: Syntax error: ")" unexpected',  # dash
        "/usr/local/bin/dcgm-exporter: line 1: syntax error near unexpected token `('",  # bash
    ):
        assert KB.class_of(line) is None, line


def test_a_scripts_or_a_files_syntax_error_keeps_the_configuration_class() -> None:
    for line in (
        "/usr/local/bin/entrypoint.sh: line 1: syntax error near unexpected token `fi'",  # a script
        "/bin/start: line 12: syntax error: unexpected end of file",  # past the first line
        "/etc/rdma/config.json: line 1: syntax error: unexpected '}'",  # not a folder of programs
    ):
        assert KB.class_of(line) == "error_config_invalid", line
