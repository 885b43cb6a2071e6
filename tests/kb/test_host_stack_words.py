# ruff: noqa: E501  (real log lines are long)
"""Signatures of the host's stack read by the words of the program that printed them: apt's
failed fetch of a repository index, the NVIDIA hook's unmet requirement, and their look-alikes."""

from __future__ import annotations

from gpunode.kb import load_kb

KB = load_kb()


def _named(component: str, source: str, line: str) -> set[str]:
    return {c.code for c, m in KB.matchers(component, source) if m.regex.search(line)}


def test_apt_index_http_error_is_repo_unreachable() -> None:
    line = "E: Failed to fetch http://archive.ubuntu.com/ubuntu/dists/jammy/InRelease  410  Gone [IP: 99.83.138.213 80]"
    assert "driver_repo_unreachable" in _named("driver", "log", line)
    line = "E: Failed to fetch http://mirror.example.org/ubuntu/dists/focal-updates/Release  403  Forbidden [IP: 10.0.0.1 3128]"
    assert "driver_repo_unreachable" in _named("driver", "log", line)


def test_apt_package_404_is_not_repo_unreachable() -> None:
    line = "E: Failed to fetch http://archive.ubuntu.com/ubuntu/pool/main/l/linux/linux-headers-5.15.0-122_5.15.0-122.132_all.deb  404  Not Found [IP: 185.125.190.36 80]"
    assert "driver_repo_unreachable" not in _named("driver", "log", line)
    line = "Hit:1 http://archive.ubuntu.com/ubuntu jammy InRelease"
    assert "driver_repo_unreachable" not in _named("driver", "log", line)


def test_hook_requirement_wrapped_in_a_paste_is_driver_too_old() -> None:
    line = ("nvidia-container-cli --load-kmods configure --require=cuda>=10.0 brand=tesla,driver>=384,driver<385 "
            "--pid=22591\\nnvidia-container-cli: requirement error: unsatisfied\n condition: driver < 385\\n")
    assert "cuda_driver_too_old" in _named("driver", "event", line)


def test_hook_other_error_is_not_driver_too_old() -> None:
    line = "nvidia-container-cli: initialization error: nvml error: driver not loaded: unknown"
    assert "cuda_driver_too_old" not in _named("driver", "event", line)


def test_profiler_perf_event_paranoid_refusal_is_the_host_kernels() -> None:
    from gpunode.job_errors import load_job_errors

    table = load_job_errors()
    found = table.read("ERROR: For Nsight Systems profiling the Linux operating system's perf_event_paranoid level must be 2 or less.")
    assert found is not None and (found.component, found.cause) == ("kernel", "error_config_invalid")
    found = table.read("Error: Access to performance monitoring and observability operations is limited. Consider tweaking /proc/sys/kernel/perf_event_paranoid,")
    assert found is not None and found.component == "kernel"
    # nsys status's own environment check when the level is fine
    assert table.read("Linux Kernel Paranoid Level = 2: OK") is None
    assert table.read("perf_event_paranoid is 1, CPU sampling enabled") is None
