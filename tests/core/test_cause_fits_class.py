"""A catalogued cause names a line only where the line means what the cause means: the class
its own example falls in is the cause's class, and a line of a more specific class that holds
none of that class's words is its class's, not the cause's (issue 20: a catalogued cause
where the line's class was the answer). Lines are real ones from public reports (address
beside each)."""

from __future__ import annotations

from gpunode.checks.signatures import log_findings
from gpunode.facts import LogFile
from gpunode.kb import load_kb

KB = load_kb()
TOOLKIT = "container-toolkit"
NOT_PATCHED = KB.get("containerd_not_patched")

# NVIDIA/gpu-operator#623: the toolkit pointed at RKE2's config.toml.tmpl cannot parse it
PARSE_ERROR = ("Error: unable to load config: failed to load config: (1, 1): parsing error: "
               "keys cannot contain { character")
# rancher/rke2#3385: the same refusal as the toolkit container logs it
PARSE_ERROR_LOGGED = ('time="2022-09-26T15:50:01Z" level=fatal msg="Error: unable to load config: (6, 21): '
                      'unexpected token type in inline table: keys cannot contain { character"')
# The cause's own example (the toolkit given a config path that does not exist on the host)
NOT_OPENED = ('level=error msg="unable to setup runtime: unable to load config: failed to load config: '
              'open /runtime/config-dir/config.toml: no such file or directory"')


def test_the_class_of_a_cause_is_its_examples() -> None:
    assert KB.example_class("containerd_not_patched") == "error_file_state"
    assert KB.example_class("kernel_headers_missing") is None  # an example in no class: any line fits


def test_a_parse_error_is_not_a_config_never_found() -> None:
    assert NOT_PATCHED.match[0].regex.search(PARSE_ERROR)  # the signature matches both
    assert not KB.fits(NOT_PATCHED, PARSE_ERROR)
    assert KB.catalogued_in(TOOLKIT, PARSE_ERROR) is None
    assert KB.class_of(PARSE_ERROR) == "error_config_invalid"


def test_the_causes_own_line_still_names_it() -> None:
    assert KB.fits(NOT_PATCHED, NOT_OPENED)
    found = KB.catalogued_in(TOOLKIT, NOT_OPENED)
    assert found is not None and found.code == "containerd_not_patched"


def test_a_less_specific_line_or_one_with_the_causes_words_fits() -> None:
    # NVIDIA/gpu-operator#569: the validator's symlink failure names a device it could not
    # find; its hint after it reads as a file's state, but the line holds the cause's
    # not-found words too
    symlinks = KB.get("validator_dev_char_symlinks_failed")
    line = ("Error: error validating driver installation: error creating symlinks: failed to get device "
            "nodes: failed to get GPU information: error getting all NVIDIA devices: error constructing "
            "NVIDIA PCI device 0000:01:00.1: unable to get device name: failed to find device with id "
            "'10fa'\\n\\nFailed to create symlinks under /dev/char that point to all possible NVIDIA "
            "character devices.")
    assert KB.fits(symlinks, line)
    assert KB.fits(NOT_PATCHED, "dial tcp 10.0.0.1:443: i/o timeout")  # less specific than its class


def test_a_log_signature_on_a_line_of_another_class_refines_nothing() -> None:
    matchers = KB.matchers(TOOLKIT, "log")

    def found(line: str) -> set[str]:
        log = LogFile("logs/gpu-operator/tk/nvidia-container-toolkit-ctr.previous.log", "gpu-operator", "tk",
                      "nvidia-container-toolkit-ctr", True, (line,))
        return {f.cause for f in log_findings(TOOLKIT, log, matchers, fits=KB.fits)}

    assert "containerd_not_patched" not in found(PARSE_ERROR_LOGGED)
    assert "containerd_not_patched" in found(NOT_OPENED)
