"""The knowledge base is valid data, and each entry's example matches it."""

from __future__ import annotations

import pytest

from gpunode.decisive import decisive_line
from gpunode.errors import BundleError
from gpunode.kb import load_kb, parse_kb, render_steps, scan_lines

KB = load_kb()
WITH_SIGNATURES = [c for c in KB.causes if c.match]


def test_codes_are_unique_snake_case() -> None:
    codes = [c.code for c in KB.causes]
    assert len(codes) == len(set(codes))


@pytest.mark.parametrize("cause", WITH_SIGNATURES, ids=lambda c: c.code)
def test_example_matches_and_near_miss_does_not(cause: object) -> None:
    from gpunode.kb import Cause

    assert isinstance(cause, Cause)
    matchers = [(cause, m) for m in cause.match]
    assert cause.example, f"{cause.code} needs an example"
    assert cause.near_miss, f"{cause.code} needs a near miss"
    assert scan_lines([cause.example], matchers), cause.code
    if any(m.source == "decisive" for m in cause.match):
        # a class is put on decisive lines only: its near miss is no error line, or another class
        assert decisive_line([cause.example]) is not None, cause.code
        assert KB.line_class(cause.example) == cause, cause.code
        assert decisive_line([cause.near_miss]) is None or KB.line_class(cause.near_miss) != cause, cause.code
        return
    assert not scan_lines([cause.near_miss], matchers), cause.code


def test_every_cause_has_next_steps_and_a_fix() -> None:
    for cause in KB.causes:
        assert cause.fix and cause.explanation and cause.title, cause.code
        assert cause.next_steps, cause.code


def test_next_steps_fill_real_names_and_keep_unknown_ones_visible() -> None:
    steps = render_steps(
        KB.get("crash_loop"), {"namespace": "gpu-operator", "pod": "nvidia-driver-daemonset-x"}
    )
    assert (
        steps[0]
        == "kubectl -n gpu-operator logs nvidia-driver-daemonset-x -c <container> --previous --tail=100"
    )


def test_bad_pattern_is_rejected_with_file_name() -> None:
    text = """
[[cause]]
code = "x_y"
component = "driver"
title = "t"
explanation = "e"
fix = "f"
  [[cause.match]]
  source = "log"
  pattern = "("
"""
    with pytest.raises(BundleError, match=r"causes/bad\.toml"):
        parse_kb({"causes/bad.toml": text})


def test_unknown_component_is_rejected() -> None:
    text = '[[cause]]\ncode="x"\ncomponent="gpu-toaster"\ntitle="t"\nexplanation="e"\nfix="f"\n'
    with pytest.raises(BundleError, match="gpu-toaster"):
        parse_kb({"causes/x.toml": text})


def test_unknown_template_field_is_rejected() -> None:
    text = (
        '[[cause]]\ncode="x"\ncomponent="driver"\ntitle="t"\nexplanation="e"\nfix="f"\n'
        'next_steps=["kubectl get {pods}"]\n'
    )
    with pytest.raises(BundleError, match="pods"):
        parse_kb({"causes/x.toml": text})


def test_a_code_used_in_two_files_is_rejected_naming_the_second() -> None:
    text = '[[cause]]\ncode="x"\ncomponent="driver"\ntitle="t"\nexplanation="e"\nfix="f"\n'
    with pytest.raises(BundleError, match=r"causes/b\.toml: .*'x'.*duplicate code"):
        parse_kb({"causes/a.toml": text, "causes/b.toml": text})


def test_the_shipped_knowledge_base_passes_every_check_including_patterns() -> None:
    """load_kb leaves compiling and linting the signatures to this test (start-up time)."""
    from gpunode.kb import shipped_kb_texts

    full = parse_kb(shipped_kb_texts())
    assert [c.code for c in full.causes] == [c.code for c in load_kb().causes]


def test_a_broken_pattern_is_caught_by_the_full_check_only() -> None:
    text = ('[[cause]]\ncode="x"\ncomponent="driver"\ntitle="t"\nexplanation="e"\nfix="f"\n'
            '[[cause.match]]\nsource="log"\npattern="GPG error: .*NO_PUBKEY"\n')
    with pytest.raises(BundleError, match="unbounded"):
        parse_kb({"causes/x.toml": text})
    assert parse_kb({"causes/x.toml": text}, patterns=False).causes[0].code == "x"


@pytest.mark.parametrize(
    ("component", "fix_for"),
    [("driver", '{ "driver" = "g" }'), ("*", '{ "gpu-toaster" = "g" }')],
    ids=["not-generic", "unknown-component"],
)
def test_fix_for_is_for_generic_causes_and_known_components(component: str, fix_for: str) -> None:
    text = (
        f'[[cause]]\ncode="x"\ncomponent="{component}"\ntitle="t"\nexplanation="e"\nfix="f"\n'
        f"fix_for = {fix_for}\n"
    )
    with pytest.raises(BundleError, match="fix_for"):
        parse_kb({"causes/x.toml": text})


def test_a_generic_cause_gives_a_component_its_own_fix() -> None:
    oom = load_kb().get("oom_killed")
    assert "operator.resources" in oom.fix_of("gpu-operator")
    assert oom.fix_of("logging-agent") == oom.fix
