"""More of the log formats the stack writes, read for their level and message: zap's console
encoder (controller-runtime's default), a failure logged at info level that quotes the error
it got or carries it in an error field. Lines are real ones from public reports (address
beside each) or the format their program writes."""

from __future__ import annotations

import pytest

from gpunode.decisive import message_of, severity
from gpunode.kb import load_kb

KB = load_kb()

#: NVIDIA OpenShift troubleshooting guide (driver-toolkit imagestream missing), zap console format
ZAP_INFO = ("2021-11-15T11:43:52.048Z\tINFO\tcontrollers.ClusterPolicy\tWARNING: OpenShift DriverToolkit "
            "was requested but could not be enabled (dependencies missing)")
#: Mellanox/network-operator#635, zap console format with its JSON fields
ZAP_ERROR = ('2023-10-16T06:52:21Z\tERROR\tError while syncing state\t{"controller": "nicclusterpolicy", '
             '"error": "failed to create/update objects: configmaps \\"sriovdp-config\\" is forbidden: '
             'cannot set blockOwnerDeletion if an ownerReference refers to a resource you can\'t set '
             'finalizers on"}')


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (ZAP_INFO, 0),  # the program judged it info, whatever words it holds
        (ZAP_ERROR, 2),
        # NVIDIA/gpu-operator#142: logged at info, quoting the error that ended the operator
        ('{"level":"info","ts":1611596227.7272515,"logger":"controller_clusterpolicy","msg":"Failed to apply '
         "transformation 'nvidia-driver-daemonset' with error: 'ERROR: Could not find kernel full version: "
         "('', '')'\"}", 1),
        # NVIDIA/gpu-operator#1207: info level, the API's refusal in the Error field
        ('{"level":"info","ts":"2025-01-16T09:45:00Z","logger":"controllers.ClusterPolicy","msg":"Couldn\'t '
         'create DaemonSet","DaemonSet":"nvidia-driver-daemonset","Error":"DaemonSet.apps \\"x..64k\\" is '
         'invalid: metadata.name: Invalid value"}', 1),
        ('{"level":"info","msg":"Reconciling ClusterPolicy","Error":""}', 0),  # an empty field says nothing
        ('time="t" level=info msg="updated node labels" error=""', 0),
    ],
)
def test_levels_of_more_formats(line: str, expected: int) -> None:
    assert severity(line) == expected


def test_zap_console_message_is_the_message_and_its_error_field() -> None:
    assert message_of(ZAP_INFO).startswith("WARNING: OpenShift DriverToolkit")
    said = message_of(ZAP_ERROR)
    assert said.startswith("Error while syncing state: failed to create/update objects")
    assert KB.class_of(said) == "error_permission_denied"


def test_a_cut_zap_line_keeps_its_fields() -> None:
    cut = ZAP_ERROR[:160]  # a paste cut inside the JSON fields
    assert "failed to create/update" in message_of(cut)


def test_an_error_field_in_a_json_line_joins_its_message() -> None:
    line = '{"level":"info","msg":"Couldn\'t create DaemonSet","Error":"metadata.name: Invalid value"}'
    assert message_of(line) == "Couldn't create DaemonSet: metadata.name: Invalid value"
    assert KB.class_of(message_of(line)) == "error_config_invalid"


def test_go_s_flag_package_refusing_an_argument_is_an_error() -> None:
    # NVIDIA/gpu-operator#164: an older device plugin given a flag it does not define
    line = "flag provided but not defined: -nvidia-driver-root"
    assert severity(line) == 1 and KB.class_of(line) == "error_config_invalid"


def test_explain_gives_the_catalogued_line_when_no_line_reads_as_an_error() -> None:
    # akash-network/support#209: an Xid is judged by the Xid catalog, not by its words
    from gpunode.explain import explain_lines

    line = ("[ 9123.442180] NVRM: Xid (PCI:0000:9a:00): 79, pid='<unknown>', name=<unknown>, "
            "GPU has fallen off the bus.")
    found = explain_lines(["[ 9123.1] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.129.03", line], KB)
    assert found.matches[0].cause.code == "gpu_fallen_off_bus"
    assert found.decisive is not None and found.decisive.line_no == 2
    assert found.decisive_class == "error_device"


def test_explain_has_no_decisive_line_on_healthy_text() -> None:
    from gpunode.explain import explain_lines

    found = explain_lines(["NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.129.03"], KB)
    assert found.decisive is None and found.decisive_class is None


@pytest.mark.parametrize(
    ("message", "cls"),
    [
        # NVIDIA/k8s-device-plugin#364: the wrappers name a config, the innermost error a file state
        ("Error: error creating symlink: symlink /available-configs/config-3 /config/config.yaml: "
         "file exists", "error_file_state"),
        # a config error stays one when it is the innermost
        ("failed to load config: toml: line 12 (last key \"plugins\"): expected '.' or '=', but got '['",
         "error_config_invalid"),
        # an innermost error in no class leaves the whole line to decide
        ("failed to get sandbox runtime: no runtime for \"nvidia\" is configured: boom",
         "error_config_invalid"),
    ],
)
def test_a_chain_is_classed_from_its_innermost_error_out(message: str, cls: str) -> None:
    assert KB.class_of(message) == cls


@pytest.mark.parametrize("line", [
    # kingpin (node_exporter, the Prometheus exporters): prometheus/node_exporter#2316,
    # bakins/minikube-prometheus-demo#5, credativ/elephant-shed#26 (a flag whose name holds
    # a word that would read as noise, "ignored")
    "node_exporter: error: unknown long flag '--collector.disable-defaults'",
    "node_exporter: error: unknown short flag '-c', try --help",
    "Dez 21 21:18:43 elephant-shed prometheus-node-exporter[27066]: prometheus-node-exporter: error: "
    "unknown long flag '--collector.netdev.ignored-devices', try --help",
    "node_exporter: error: required flag '--web.config.file' not provided, try --help",
    # Go's flag package and cobra
    "flag needs an argument: -config",
    'Error: required flag(s) "config" not set',
])
def test_a_command_line_the_program_refuses_is_an_invalid_configuration(line: str) -> None:
    assert severity(line) >= 1 and KB.class_of(message_of(line)) == "error_config_invalid"


def test_a_flag_it_reads_is_no_error() -> None:
    line = ('ts=2022-02-16T06:11:38.576Z caller=filesystem_common.go:111 level=info collector=filesystem '
            'msg="Parsed flag --collector.filesystem.mount-points-exclude" flag=^/(dev|proc|sys)($|/)')
    assert severity(line) == 0


def test_a_noise_word_as_the_line_s_outcome_is_still_noise() -> None:
    assert severity("failed to reach the API server, retrying") == 0
    assert severity("skipping device mlx5_3: not an RDMA device, ignored") == 0
