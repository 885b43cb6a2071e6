"""A container engine's own GPU step failing, in its own words (data/job_errors/
container_engines.toml): the dynamic linker refusing the engine's own binary
(engine-binary-symbol-lookup), Toolbx applying the NVIDIA CDI spec itself
(toolbx-cdi-apply-failed) and distrobox-init's NVIDIA bind mounts (distrobox-nvidia-bind-failed)
are the container runtime's. Where the engine's summary names the layer and the line before it
says why (mount(8)'s words), the finding takes the class of the reason
(checks.workload_logs._with_reason). The entries' own lines and look-alikes (a driver library as
the unresolved object, the engines' healthy progress lines) are read with the other engines' in
test_field_engine_client_words.py; here, a summary whose own words carry a class.

Sources: glibc elf/dl-lookup.c, containers/toolbox PR 1548; containers/toolbox
src/cmd/initContainer.go, containers/toolbox#1572; 89luca89/distrobox distrobox-init,
89luca89/distrobox#1123."""

from __future__ import annotations

from case import gpu_job_case
from scoreboard import top_pair

from gpunode.checks.workload_logs import _with_reason
from gpunode.decisive import Decisive
from gpunode.kb import load_kb

KB = load_kb()


def test_toolbx_cdi_mount_takes_mounts_reason() -> None:
    text = ("Error: mount: /run/nvidia-persistenced/socket: mount point does not exist.\n"
            "       dmesg(1) may have more information after failed mount system call.\n"
            "failed to apply mount from Container Device Interface for NVIDIA")
    assert top_pair(gpu_job_case("x-toolbx-cdi", text)) == ("container-runtime", "error_file_state")


def test_toolbx_entered_stays_healthy() -> None:
    text = ("level=debug msg=\"Applying Container Device Interface for NVIDIA\"\n"
            "level=debug msg=\"Creating regular file /run/nvidia-persistenced/socket\"\nready")
    assert top_pair(gpu_job_case("x-toolbx-ok", text)) is None


def test_distrobox_bind_failure_is_the_engines() -> None:
    text = ("Setting up host's nvidia integration...\n"
            " Warning: failed to bind mount /run/host/usr/lib64/libcuda.so.1 to\n"
            "filesystem was mounted, but any subsequent operation failed: Unknown error 5005.")
    assert top_pair(gpu_job_case("x-distrobox", text)) == ("container-runtime", "error_unclassified")


def test_reason_only_where_the_summary_has_no_class() -> None:
    reason = Decisive(1, "Error: mount: /x: mount point does not exist.", 2)
    summary = Decisive(3, "failed to apply mount from Container Device Interface for NVIDIA", 1)
    read = _with_reason(KB, summary, reason)
    assert read is not None and read.line == summary.line
    assert KB.class_of(read.message) == "error_file_state"
    # a summary with a class of its own keeps it
    classed = Decisive(3, "failed to apply mount: permission denied", 1)
    assert _with_reason(KB, classed, reason) == classed
    # a reason line with no class adds nothing
    bare = Decisive(1, "something went sideways", 1)
    assert _with_reason(KB, summary, bare) == summary
    assert _with_reason(KB, None, reason) is None


def test_a_step_named_before_its_error_is_read_as_it_is() -> None:
    # NCCL's NVLS message opens with the step, then the CUDA error, then its hint
    reason = Decisive(2, "CUDA error 401 'the operation cannot be performed in the present state'.", 1)
    opening = Decisive(1, "Failed to bind NVLink SHARP (NVLS) Multicast memory of size 2097152:", 1)
    assert _with_reason(KB, opening, reason) == opening
    hint = Decisive(3, "This is usually caused by a system or configuration error in the Fabric Manager.", 1)
    assert _with_reason(KB, hint, reason) == hint
