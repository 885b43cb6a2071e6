"""Readings of upper-layer lines found wrong by the public line audit (tests/field/
public_lines_upper.py, set A): a YAML scanner's error is a configuration that does not parse,
a PCI BAR's MMIO that cannot be opened is the device's, and a DRA driver's prepare step that
the kubelet relays is the DRA driver's even where it speaks of the CDI spec it writes. Each
reading is checked on a look-alike that must keep its old answer."""

from __future__ import annotations

from case import synthetic_case
from scoreboard import top_pair

from gpunode.catalog import load_catalog
from gpunode.checks.named import _dra_prepare_owner, resource_owner
from gpunode.kb import load_kb

# kyma-project/kyma#6755: Promtail's positions file cut on its last line.
_PROMTAIL = ('level=error ts=2020-01-02T10:11:12.123Z caller=main.go:56 msg="error creating promtail" '
             'error="yaml: line 107: could not find expected \':\'"')


def test_a_yaml_scanner_error_is_a_configuration_that_does_not_parse() -> None:
    kb = load_kb()
    assert kb.class_of(_PROMTAIL) == "error_config_invalid"
    assert kb.class_of("yaml: line 3: could not find expected ':'") == "error_config_invalid"
    # look-alike: something asked for that is not there stays not found
    assert kb.class_of('Error: could not find device "ib0"') == "error_not_found"


def test_a_log_agent_that_cannot_read_its_positions_yaml_is_its_configuration() -> None:
    case = synthetic_case("promtail-positions", [
        {"kind": "pod-state", "component": "logging-agent", "state": "CrashLoopBackOff", "restarts": 9},
        {"kind": "log", "component": "logging-agent", "previous": True, "text": _PROMTAIL + "\n"}],
        healthy=False)
    assert top_pair(case) == ("logging-agent", "error_config_invalid")


# NVIDIA/mig-parted#199: the MIG manager cannot map the GPU's BAR0 at boot.
_BAR0 = ('time="2025-04-29T17:01:17+02:00" level=fatal msg="Error applying MIG configuration with hooks: '
         'error checking MIG capable: error opening bar0 MMIO resource: unknown endianness for mmio: <nil>"')


def test_a_bar_mmio_that_cannot_be_opened_is_the_device() -> None:
    kb = load_kb()
    assert kb.class_of(_BAR0) == "error_device"
    # look-alike: an unknown value with no device words stays a configuration
    assert kb.class_of('level=fatal msg="unknown mode for mig-parted: <nil>"') != "error_device"


def test_a_mig_manager_that_reads_its_bar0_says_nothing_wrong() -> None:
    info = ('time="2025-04-29T17:01:17+02:00" level=debug msg="    Asserting MIG mode: Enabled"\n'
            'time="2025-04-29T17:01:17+02:00" level=debug msg="opened bar0 MMIO resource"\n'
            'time="2025-04-29T17:01:18+02:00" level=info msg="Waiting for change to '
            '\'nvidia.com/mig.config\' label"\n')
    case = synthetic_case("mig-bar0-ok", [
        {"kind": "pod-state", "component": "mig-manager", "state": "Running"},
        {"kind": "log", "component": "mig-manager", "text": info}])
    assert top_pair(case) is None


# kubernetes/kubernetes#124090: the DRA driver could not chmod the CDI spec it wrote for a claim.
_DRA = ('E0328 10:29:43.770694 2855486 kuberuntime_manager.go:1152] "Failed to prepare dynamic resources" '
        'err="NodePrepareResources failed for claim default/rdma-demo: error preparing devices for claim '
        '71d5aeee: unable to create CDI spec file for claim: failed to set permissions on spec file: chmod '
        '/var/run/cdik8s.netresources.spidernet.io-claim_71d5aeee.yaml: no such file or directory"')


def test_cdi_words_in_a_dra_prepare_step_are_the_dra_drivers_own() -> None:
    catalog = load_catalog()
    assert catalog.named_in(_DRA) == "container-toolkit"  # CDI alone names the toolkit
    assert _dra_prepare_owner(catalog, _DRA) == "dra-kubelet-plugin"


def test_a_lower_layer_a_dra_prepare_step_names_still_wins() -> None:
    catalog = load_catalog()
    nvml = ('"Failed to prepare dynamic resources" err="NodePrepareResources failed for claim ml/c: '
            'error creating CDI spec: nvidia-container-cli: initialization error: nvml error: driver/library '
            'version mismatch"')
    assert _dra_prepare_owner(catalog, nvml) is None  # the catalog's lowest layer decides
    assert catalog.named_in(nvml) == "driver"
    # look-alike: the toolkit's own CDI line names no DRA driver and keeps the toolkit
    toolkit = ("Error: failed to create containerd task: unresolvable CDI devices nvidia.com/gpu=all")
    assert _dra_prepare_owner(catalog, toolkit) is None
    assert catalog.named_in(toolkit) == "container-toolkit"


def test_a_dra_claim_whose_spec_cannot_be_written_is_the_dra_driver() -> None:
    case = synthetic_case("dra-chmod", [
        {"kind": "workload", "name": "rdma-rc-0", "namespace": "default", "state": "ContainerCreating"},
        {"kind": "node-cmd", "name": "journal-kubelet.txt", "text": "Mar 28 10:29:43 worker-node-1 "
                                                                    "kubelet[2855486]: "
         + _DRA + ' pod="default/rdma-rc-0"\n'}], healthy=False)
    assert top_pair(case) == ("dra-kubelet-plugin", "dra_prepare_failed")


# Go's net.SplitHostPort refusing a configured listen address (NVIDIA/gpu-monitoring-tools#111:
# DCGM_EXPORTER_LISTEN set to "9400" where dcgm-exporter wants ":9400").
_LISTEN = ('time="2020-09-30T08:00:00Z" level=fatal msg="Failed to Listen and Server HTTP server with err: '
           '`listen tcp: address 9400: missing port in address`"')


def test_an_address_without_its_port_is_a_configuration() -> None:
    kb = load_kb()
    assert kb.class_of(_LISTEN) == "error_config_invalid"
    colons = "listen tcp: address ::1:9400:80: too many colons in address"
    assert kb.class_of(colons) == "error_config_invalid"
    # look-alike: an address that is well formed but taken is no configuration error
    assert kb.class_of("listen tcp :9400: bind: address already in use") != "error_config_invalid"


# volcano-sh/devices#59: the kubelet's stream from Volcano's vGPU plugin ended.
_EOF = ('Mar 19 14:31:09 dell-63 kubelet[1067]: E0319 14:31:09.987111    1067 endpoint.go:107] '
        '"listAndWatch ended unexpectedly for device plugin" err="rpc error: code = Unavailable desc = '
        'error reading from server: EOF" resourceName="volcano.sh/vgpu-number"')


def test_a_kubelet_line_about_a_plugins_endpoint_names_the_plugin_of_its_resource() -> None:
    catalog = load_catalog()
    assert resource_owner(catalog, ["device-plugin"], "volcano.sh/vgpu-number") == "volcano-device-plugin"
    # several plugins advertise nvidia.com/gpu: the one serving the node
    assert resource_owner(catalog, ["device-plugin", "hami-device-plugin"], "nvidia.com/gpu") \
        == "hami-device-plugin"
    assert resource_owner(catalog, ["device-plugin"], "example.com/foo") is None
    case = synthetic_case("volcano-eof", [
        {"kind": "node-cmd", "name": "journal-kubelet.txt", "text": _EOF + "\n"}], healthy=False)
    assert top_pair(case) == ("volcano-device-plugin", "error_unreachable")


def test_a_plugin_registering_its_resource_with_the_kubelet_is_no_failure() -> None:
    ok = ('Mar 19 14:30:01 dell-63 kubelet[1067]: I0319 14:30:01.100000    1067 server.go:144] '
          '"Got registration request from device plugin with resource" '
          'resourceName="volcano.sh/vgpu-number"\n')
    assert top_pair(synthetic_case("volcano-registered", [
        {"kind": "node-cmd", "name": "journal-kubelet.txt", "text": ok}])) is None
