"""The shipped job-error table passes every check of its validation: the command decodes it
without them (``load_job_errors``), so a bad entry is refused here, not at each start."""

from __future__ import annotations

from gpunode.job_errors import load_job_errors, parse_job_error_files, shipped_job_error_files, shipped_known


def test_the_shipped_job_error_files_validate_as_one_table() -> None:
    validated = parse_job_error_files(shipped_job_error_files(), shipped_known())
    assert validated.entries == load_job_errors().entries


def test_every_shipped_entry_reads_its_own_example() -> None:
    table = load_job_errors()
    for entry in table.entries:
        found = table.read(entry.example)
        assert found is not None, entry.id
