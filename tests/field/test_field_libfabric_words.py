"""libfabric's own words under a GPU job's fabric, read as the layer they name.

fi_getinfo finding no provider (FI_ENODATA, -61) as libfabric's own tools print it: fi_info's
"fi_getinfo: -61 (No data available)" (util/info.c prints "fi_getinfo: %d (%s)" and stops;
aws/aws-ofi-nccl#879, `fi_info -p efa` in a container given no EFA device) and fabtests'
"fi_getinfo(): <file>:<line>, ret=-61 (No data available)" (FT_PRINTERR, the form seen for
fi_enable in aws/aws-cdi-sdk#48): the fabric's devices are not there for the job. Open MPI's
verbose probe "fi_getinfo(): No data available" and other return codes stay unread."""

from __future__ import annotations

from case import gpu_job_case
from scoreboard import top_pair

from gpunode.checks.job_words import job_cause, job_names

FI_INFO = "fi_getinfo: -61 (No data available)"
FABTESTS = "fi_getinfo(): common/shared.c:1043, ret=-61 (No data available)"
OMPI_PROBE = "mtl_ofi_component.c:764: fi_getinfo(): No data available"


def _table(line: str) -> tuple[str | None, str | None]:
    component = job_names(line)
    return component, job_cause(line, component) if component else None


def test_libfabric_tools_reporting_no_provider_are_the_fabric_not_found() -> None:
    for line in (FI_INFO, FABTESTS):
        assert _table(line) == ("gpudirect-rdma", "error_not_found"), line
    assert top_pair(gpu_job_case("x-fi-info", FI_INFO)) == ("gpudirect-rdma", "error_not_found")


def test_a_probe_or_another_return_code_of_the_same_call_says_nothing() -> None:
    for line in (OMPI_PROBE, "fi_getinfo: -2 (No such file or directory)",
                 "fi_getinfo(): common/shared.c:1043, ret=-12 (Cannot allocate memory)"):
        assert _table(line) == (None, None), line

