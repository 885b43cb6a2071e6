"""A cause about a program that runs as different components in different deployments is read
in each one's own words (``also_for``): Fabric Manager's refusal of a driver of another version
is fabric_manager_version_mismatch in the driver container under the GPU Operator and in the
host unit's journal alike. And a line that says two versions do not match is a version
mismatch, whatever program wrote it (issue 20). Lines are real ones from public reports
(address beside each)."""

from __future__ import annotations

import pytest

from gpunode.kb import load_kb

KB = load_kb()

# NVIDIA/gpu-operator#544: nvidia-fabricmanager 530 from apt against the loaded 530 driver
FM_JOURNAL = ("nv-fabricmanager[3228]: fabric manager NVIDIA GPU driver interface version 530.30.02 don't "
              "match with driver version 530.41.03. Please update with matching NVIDIA driver package.")


def test_fabric_managers_own_journal_names_the_catalogued_cause() -> None:
    found = KB.catalogued_in("fabric-manager", FM_JOURNAL)
    assert found is not None and found.code == "fabric_manager_version_mismatch"
    assert found.component == "driver"  # still catalogued where the operator runs it
    in_driver = KB.catalogued_in("driver", FM_JOURNAL)
    assert in_driver is not None and in_driver.code == "fabric_manager_version_mismatch"


def test_other_components_words_do_not_carry_it() -> None:
    assert KB.catalogued_in("device-plugin", FM_JOURNAL) is None
    # Fabric Manager's other words stay its own causes' or a class
    started = KB.catalogued_in("fabric-manager", "Starting NVIDIA fabric manager daemon...")
    assert started is None or started.code != "fabric_manager_version_mismatch"


def test_also_for_names_known_other_components() -> None:
    from gpunode.errors import BundleError
    from gpunode.kb import parse_kb, shipped_kb_texts

    texts = shipped_kb_texts()
    name = next(n for n, t in texts.items() if 'also_for = ["fabric-manager"]' in t)
    bad = texts[name].replace('also_for = ["fabric-manager"]', 'also_for = ["driver"]')
    with pytest.raises(BundleError, match="also_for"):
        parse_kb({**texts, name: bad})


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (FM_JOURNAL, "error_version_mismatch"),
        # siderolabs/pkgs#720: the same words on Talos (Fabric Manager 525 against driver 530)
        ("fabric manager NVIDIA GPU driver interface version 525.85.12 don't match with driver version "
         "530.41.03. Please update with matching NVIDIA driver package", "error_version_mismatch"),
        # a version that matches is no error of any class
        ("driver version 550.54.15 matches library version 550.54.15", None),
        # a match of something else than a version is not a version mismatch
        ("label value does not match regex", None),
    ],
)
def test_versions_that_do_not_match_are_a_version_mismatch(line: str, expected: str | None) -> None:
    assert KB.class_of(line) == expected
