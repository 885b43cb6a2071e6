"""libfabric's own words under a GPU job's fabric, read as the layer they name.

fi_getinfo finding no provider (FI_ENODATA, -61) as libfabric's own tools print it: fi_info's
"fi_getinfo: -61 (No data available)" (util/info.c prints "fi_getinfo: %d (%s)" and stops;
aws/aws-ofi-nccl#879, `fi_info -p efa` in a container given no EFA device) and fabtests'
"fi_getinfo(): <file>:<line>, ret=-61 (No data available)" (FT_PRINTERR, the form seen for
fi_enable in aws/aws-cdi-sdk#48): the fabric's devices are not there for the job. Open MPI's
verbose probe "fi_getinfo(): No data available" and other return codes stay unread.

The EFA provider's internal-error abort with fi_strerror's -12 ("Libfabric error: (-12) Cannot
allocate memory", printed only by prov/efa's efa_base_ep_write_eq_error): the provider pins its
own packet pools at endpoint set-up and the kernel counts them against RLIMIT_MEMLOCK, which the
provider's documentation asks to be unlimited (prov/efa/docs/overview.md;
awslabs/awsome-distributed-ai#647 at 64 KiB; aws/aws-ofi-nccl#141): the limit the container was
started with. fi_mr_reg of a job's own buffers failing with ENOMEM (the device's page limit,
ofiwg/libfabric#9739) and the block's other errors are not read so."""

from __future__ import annotations

from case import gpu_job_case, running_job_case
from scoreboard import top_pair

from gpunode.checks.job_words import job_cause, job_names

FI_INFO = "fi_getinfo: -61 (No data available)"
FABTESTS = "fi_getinfo(): common/shared.c:1043, ret=-61 (No data available)"
OMPI_PROBE = "mtl_ofi_component.c:764: fi_getinfo(): No data available"
EFA_ABORT = ("Libfabric EFA provider has encountered an internal error:\n\n"
             "Libfabric error: (-12) Cannot allocate memory\n"
             "EFA internal error: (4112) Failure to post internal receive buffers\n\n"
             "Your application will now abort().")


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


def test_the_efa_provider_aborting_on_enomem_is_the_containers_memlock_limit() -> None:
    assert _table("Libfabric error: (-12) Cannot allocate memory") == (
        "container-runtime", "error_resource_exhausted")
    assert top_pair(gpu_job_case("x-efa-enomem", EFA_ABORT)) == (
        "container-runtime", "error_resource_exhausted")


def test_the_efa_blocks_other_errors_and_a_buffer_registration_stay_unread() -> None:
    other = EFA_ABORT.replace("(-12) Cannot allocate memory", "(-5) Input/output error")
    for line in other.splitlines():
        assert _table(line) == (None, None), line
    page_limit = ("libfabric:15409:1705531788::efa:mr:efa_mr_reg_impl():850<warn> Unable to register MR: "
                  "Cannot allocate memory")
    assert _table(page_limit) == (None, None)
    assert top_pair(running_job_case("x-efa-warn", "EFA internal error: (4112) Failure to post internal "
                                     "receive buffers")) is None
