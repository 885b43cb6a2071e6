"""nvidia-cdi-hook is the toolkit's program: the CDI specs nvidia-ctk generates name it for the
runtime to run (chmod, create-symlinks, update-ldcache; cmd/nvidia-cdi-hook/README.md in
NVIDIA/nvidia-container-toolkit; void-linux/void-packages#55062 shipped a toolkit without it).
crun's report of it failing ('error executing hook `/usr/bin/nvidia-cdi-hook` (exit code: 1)',
NVIDIA/nvidia-container-toolkit#648) names the toolkit, as the same report of nvidia-ctk does;
another program's hook, and a hook that failed with no words of its own at all, do not."""

from __future__ import annotations

from case import Case, running_job_case, synthetic_case
from scoreboard import top_pair

_CRUN = ('Error: OCI runtime error: /usr/bin/crun: {{"msg":"error executing hook `{hook}` (exit code: 1)",'
         '"level":"error","time":"2024-08-13T07:48:19.461304Z"}}')


def _hook_failed(hook: str) -> Case:
    """A GPU pod whose container crun could not create because the hook ``hook`` exited 1."""
    return synthetic_case("x-cdi-hook", [
        {"kind": "workload", "name": "gpu", "namespace": "default", "state": "CreateContainerError",
         "message": _CRUN.format(hook=hook)},
        {"kind": "event", "object": {"kind": "Pod", "name": "gpu", "namespace": "default"},
         "type": "Warning", "reason": "Failed", "message": _CRUN.format(hook=hook)},
    ], platform="crio", healthy=False, cluster={"runtime": "crio", "driver_mode": "host"})


def test_the_toolkits_cdi_hook_failing_under_crun_is_the_toolkits() -> None:
    assert top_pair(_hook_failed("/usr/bin/nvidia-cdi-hook")) == ("container-toolkit", "error_unclassified")


def test_another_programs_hook_failing_is_not_the_toolkits() -> None:
    top = top_pair(_hook_failed("/usr/libexec/oci/hooks.d/oci-systemd-hook"))
    assert top is not None and top[0] != "container-toolkit", top


def test_healthy_job_naming_the_cdi_hook_stays_healthy() -> None:
    case = running_job_case("x-cdi-hook-healthy",
                            "Installing CDI hook: /usr/local/nvidia/toolkit/nvidia-cdi-hook\n"
                            "GPU 0: NVIDIA A100-SXM4-80GB\nstep 10 loss 0.52")
    assert top_pair(case) is None
