"""explain never answers pasted failure text with silence (issue 20): where no line reads as
an error (a warning, a retry, an info-level line quoting a timeout), the last line whose
words say something failed is the decisive one; a port another process holds and a
scheduler's "didn't have enough" are failures in their own words."""

from __future__ import annotations

from gpunode.decisive import decisive_line, lenient_line
from gpunode.explain import explain_lines
from gpunode.kb import load_kb

KB = load_kb()


def test_a_retried_warning_is_explain_s_decisive_line() -> None:
    # NVIDIA/gpu-operator#1687: the validator retries a driver it cannot find on Talos.
    text = ["INFO[0000] Attempting to validate a driver container installation",
            "WARN[0000] failed to validate the driver, retrying after 5 seconds"]
    assert decisive_line(text) is None  # a retry: diagnose does not judge by it
    found = explain_lines(text, KB)
    assert found.decisive is not None and found.decisive.line_no == 2
    assert found.decisive_class == "error_unclassified"


def test_an_info_line_that_quotes_a_timeout_is_read_for_its_class() -> None:
    # NVIDIA/gpu-operator#400: the exporter falls back to its default counters.
    line = ('time="2022-08-19T07:26:21Z" level=info msg="Could not retrieve ConfigMap \'gpu-monitor:exporter-'
            'metrics-config-map\': Get \\"https://10.0.0.1/api/v1/namespaces/gpu-monitor/configmaps/x\\": '
            'dial tcp 10.0.0.1:443: i/o timeout, falling back to metric file '
            '/etc/dcgm-exporter/default-counters.csv"')
    found = explain_lines([line], KB)
    assert found.decisive_class == "error_unreachable"


def test_healthy_text_stays_without_a_decisive_line() -> None:
    text = ["I0611 10:02:51.774120 1 server.go:195] Registered device plugin for 'nvidia.com/gpu' "
            "with Kubelet",
            "W0611 10:02:51.774120 1 main.go:12] Persistence mode is deprecated"]
    assert lenient_line(text) is None
    assert explain_lines(text, KB).decisive is None


def test_a_port_held_by_another_process_is_a_failure() -> None:
    # ibm-mas/ansible-devops#2449: a second NFD worker on OpenShift takes port 8082.
    found = decisive_line(["listen tcp :8082: bind: address already in use"])
    assert found is not None and found.line_no == 1


def test_a_scheduler_without_enough_resources_is_resource_exhaustion() -> None:
    # NVIDIA/KAI-Scheduler#706: no node advertises the GPU memory a fraction asks for.
    line = ("no nodes with enough resources were found: 1 node(s) didn't have enough resources: "
            "GPU memory.")
    assert KB.class_of(line) == "error_resource_exhausted"


def test_a_missing_file_is_read_with_the_path_it_names() -> None:
    assert KB.class_of("lstat /dev/nvidia0: no such file or directory") == "error_device"
    assert KB.class_of("failed to open /etc/dcgm-exporter/custom.csv: no such file or directory") == \
        "error_file_state"
