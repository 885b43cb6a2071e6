"""How a decisive line is read: which part of an error chain decides its class, and which
catalogued causes a wrapper at the start of a chain may not claim. Lines are from public
reports (the source of each is named beside it)."""

from __future__ import annotations

import msgspec
import pytest

from gpunode.bundle.kube import Pod
from gpunode.checks.decisive import controller_finding, running_finding
from gpunode.checks.operator import nfd_missed_vendor
from gpunode.checks.pods import pod_problem
from gpunode.checks.toolkit import _cri_disabled, _defines_nvidia
from gpunode.decisive import decisive_line
from gpunode.explain import explain_lines
from gpunode.facts import LogFile
from gpunode.kb import load_kb

KB = load_kb()


@pytest.mark.parametrize(
    ("line", "cls"),
    [
        # NVIDIA/gpu-feature-discovery#24: NVML's status string alone ("Not Found") names
        # nothing missing; "NVML error" before it says which layer answered
        ("gpu-feature-discovery: 2022/06/15 03:25:50 Error: error creating NVML labeler: error creating "
         "resource labeler: failed to construct MIG resource labeler: failed to create labeler for "
         "mig-strategy=single: failed to check for empty MIG-enabled devices: NVML error: Not Found",
         "error_device"),
        # NVIDIA/gpu-operator#671: modprobe's errno after the module it could not insert
        ("Error: error validating driver installation: error creating symlink creator: failed to load "
         "NVIDIA kernel modules: failed to load module nvidia-modeset: exit status 1; "
         "output=modprobe: ERROR: could not insert 'nvidia_modeset': No such device",
         "error_module_load"),
        # a tag that is not published is still not found with its reference before it
        ('failed to resolve reference "nvcr.io/nvidia/driver:535.104.05-bottlerocket1.19.2": '
         "nvcr.io/nvidia/driver:535.104.05-bottlerocket1.19.2: not found", "error_not_found"),
        # a missing file keeps its path
        ("open /etc/dcgm-exporter/custom.csv: no such file or directory", "error_file_state"),
    ],
)
def test_a_bare_status_is_read_with_what_returned_it(line: str, cls: str) -> None:
    assert KB.class_of(line) == cls


@pytest.mark.parametrize(
    ("line", "cls"),
    [
        # GoogleCloudPlatform/cos-gpu-installer#24 (the installer's download fails its md5sum)
        ("md5sum: WARNING: 1 computed checksum did NOT match"
         "NVIDIA-Linux-x86_64-396.37-diagnostic.run: FAILED",
         "error_file_state"),
        # andrewd18/df-lnp-installer#3 and AeliusSaionji/chocopkgs#81: the same in other tools' words
        ("sha1sum: WARNING: 1 computed checksum did NOT match", "error_file_state"),
        ("Error - hashes do not match. Actual value was "
         "'A31DF6F4F07E78EF22FE3FFD5CDD00392635049BB68C54A7FAC116E81D2EA647'.",
         "error_file_state"),
        # NVIDIA/gpu-driver-container#1: a module file an earlier install left behind
        ("ERROR: The file '/lib/modules/5.19.0-32-generic/kernel/drivers/video/nvidia.ko' already exists "
         "as part of this driver installation.", "error_file_state"),
        # onepanelio/onepanel#789: a command looked up in $PATH that is not there is not found,
        # not a file in the wrong state
        ('Error: failed to start container "nvidia-device-plugin-ctr": Error response from daemon: OCI '
         "runtime create failed: container_linux.go:370: starting container process caused: exec: "
         '"--fail-on-init-error=false": executable file not found in $PATH: unknown', "error_not_found"),
        # NVIDIA's OpenShift troubleshooting guide: packages the build cannot install
        ("FATAL: failed to install elfutils packages. RHEL entitlement may be improperly deployed",
         "error_not_found"),
        # kubernetes-sigs/dra-driver-nvidia-gpu#289: what a configuration file names matches
        # nothing on the host
        ("[Mar 21 2025 20:45:38] [ERROR] [tid 39] No matching network interface found for any IP "
         "addresses in the node configuration file", "error_config_invalid"),
        # siderolabs/docs#581: a C library's errno in parentheses after the path is the innermost
        # error; "ABI version" names the file read (and "abi_version" is no word ABI)
        ("10.0.0.101: nvlsm: ibwarn: [15] umad_init: can't read ABI version from "
         "/sys/class/infiniband_mad/abi_version (No such file or directory): is ib_umad module loaded?",
         "error_file_state"),
        # NVIDIA/nccl#426: a verbs work completion with status 12 is the transport retry counter
        # exceeded, the peer never answered
        ("-worker-1:946:988 [0] transport/net_ib.cc:839 NCCL WARN NET/IB : Got completion with error 12, "
         "opcode 1, len 0, vendor err 129", "error_unreachable"),
        # beclab/Olares#3963: nvidia.ko probed no GPU (nova_core held it), so it did not load
        ("[  201.913648] NVRM: No NVIDIA devices probed.", "error_module_load"),
        # the Docker daemon refusing a bind mount whose propagation needs a shared mount
        # (docker-development-youtube-series#29, node-exporter's root mounted rslave)
        ("path / is mounted on / but it is not a shared or slave mount", "error_file_state"),
        # akash-network/support#138: the kubelet's eviction message names the resource it is low on
        ("The node was low on resource: ephemeral-storage. Threshold quantity: 15763389861, "
         "available: 12139364Ki.", "error_resource_exhausted"),
    ],
)
def test_classes_of_lines_no_one_catalogued(line: str, cls: str) -> None:
    assert KB.class_of(line) == cls


@pytest.mark.parametrize(("line", "cls"), [
    ("path / is mounted on / but it is not a shared or slave mount", "error_file_state"),
    # kubernetes-sigs/dra-driver-nvidia-gpu#864: a program that declines to go on says so
    ("empty cluster UUID, refusing to start", "error_unclassified"),
    ("The node was low on resource: ephemeral-storage. Threshold quantity: 15763389861, "
     "available: 12139364Ki.", "error_resource_exhausted"),
])
def test_lines_without_an_error_word_of_their_own_are_still_decisive(line: str, cls: str) -> None:
    """A refusal to go on, an eviction for a resource, a mount without the propagation a bind
    mount needs: pasted alone, explain gives each back as the decisive line with its class."""
    assert explain_lines([line], KB).decisive_class == cls


def test_an_object_that_already_exists_is_no_file_state() -> None:
    line = 'configmaps "default-mig-parted-config" already exists'
    assert KB.class_of(line) != "error_file_state"


_PULL = ('Failed to pull image "nvcr.io/nvidia/driver:{tag}": rpc error: code = NotFound desc = failed to '
         'pull and unpack image "nvcr.io/nvidia/driver:{tag}": failed to resolve reference '
         '"nvcr.io/nvidia/driver:{tag}": nvcr.io/nvidia/driver:{tag}: not found')


@pytest.mark.parametrize(
    ("tag", "cause"),
    [
        ("570.148.08-cos121", "unsupported_os"),  # NVIDIA/gpu-operator#1623 (GKE, COS 121)
        ("535.104.05-bottlerocket1.19.2", "unsupported_os"),  # NVIDIA/gpu-operator#709
        ("550.127.08-centos10", "unsupported_os"),
        ("550.127.08-ubuntu24.04", "driver_image_not_found"),  # a published OS: a tag not there
    ],
)
def test_a_driver_tag_for_an_os_without_driver_images(tag: str, cause: str) -> None:
    found = KB.catalogued_in("driver", _PULL.format(tag=tag))
    assert found is not None and found.code == cause


def test_the_validators_wrappers_claim_no_cause_of_their_own() -> None:
    # NVIDIA/gpu-operator#671: the step's wrapper and its /dev/char banner follow a module
    # that could not be loaded; neither says the driver is not ready or a PCI ID is unknown
    chain = ("Error: error validating driver installation: error creating symlink creator: failed to "
             "load NVIDIA kernel modules: failed to load module nvidia-modeset: exit status 1; "
             "output=modprobe: ERROR: could not insert 'nvidia_modeset': No such device")
    banner = "Failed to create symlinks under /dev/char that point to all possible NVIDIA character devices."
    assert KB.catalogued_in("validator", chain) is None
    assert KB.catalogued_in("validator", banner) is None
    unknown_id = "Error: error validating driver installation: error creating symlinks:"
    assert KB.catalogued_in("validator", unknown_id).code == "validator_dev_char_symlinks_failed"  # type: ignore[union-attr]
    waiting = "chroot: failed to run command 'nvidia-smi': No such file or directory"
    assert KB.catalogued_in("validator", waiting).code == "validator_driver_not_ready"  # type: ignore[union-attr]


def test_a_crash_on_the_programs_own_bug_ends_it_not_the_error_logged_before() -> None:
    # kubernetes-sigs/node-feature-discovery#1168: a rule's error is logged and handled, then
    # the master indexes an empty result and panics; the panic is what ended the container
    lines = [
        'E0421 12:52:31.813082       1 nfd-master.go:912] failed to process Rule "rdt l3 closid extended '
        'rule": feature "cpu.rdt" not available',
        "panic: runtime error: index out of range [1] with length 1",
        "",
        "goroutine 131 [running]:",
        "sigs.k8s.io/node-feature-discovery/pkg/nfd-master.(*nfdMaster).filterExtendedResources(0xc000557578?)",
        "        /go/node-feature-discovery/pkg/nfd-master/nfd-master.go:709 +0xc57",
    ]
    found = decisive_line(lines, KB.class_of)
    assert found is not None and found.line_no == 2
    # a wrapper that only says the program exits still gives way to the error before it
    wrapped = decisive_line(["level=error msg=\"open /dev/nvidiactl: permission denied\"", "exit status 1"],
                            KB.class_of)
    assert wrapped is not None and wrapped.line_no == 1


def _validator_pod(waiting: dict[str, str]) -> Pod:
    """An operator-validator pod whose first init container waits as ``waiting`` says."""
    doc = {
        "metadata": {"name": "nvidia-operator-validator-rqvn2", "namespace": "gpu-operator"},
        "spec": {"nodeName": "gpu-wk-01", "initContainers": [{"name": "driver-validation"}],
                 "containers": [{"name": "nvidia-operator-validator"}]},
        "status": {
            "phase": "Pending",
            "initContainerStatuses": [{
                "name": "driver-validation", "ready": False, "restartCount": 0,
                "image": "nvcr.io/nvidia/cloud-native/gpu-operator-validator:v25.10.1",
                "state": {"waiting": waiting}}],
            "containerStatuses": [{
                "name": "nvidia-operator-validator", "ready": False, "restartCount": 0,
                "state": {"waiting": {"reason": "PodInitializing"}}}],
        },
    }
    return msgspec.convert(doc, Pod)


def test_an_init_container_that_cannot_pull_its_image_is_a_pull_failure_not_a_wait() -> None:
    # NVIDIA/gpu-operator#1968: every operand's validator init container backs off pulling
    pulling = pod_problem(_validator_pod({
        "reason": "ImagePullBackOff",
        "message": 'Back-off pulling image "nvcr.io/nvidia/cloud-native/gpu-operator-validator:v25.10.1"'}),
        "validator")
    assert pulling is not None and pulling.cause == "image_pull_failed"
    waiting = pod_problem(_validator_pod({"reason": "PodInitializing"}), "validator")
    assert waiting is not None and waiting.cause == "init_blocked"


@pytest.mark.parametrize(
    ("labels", "operator", "missed"),
    [
        # openshift/assisted-service#7696: NFD's label fields add the device id; the GPU Operator
        # reads only the vendor-only (or class_vendor) label
        ({"feature.node.kubernetes.io/pci-10de_2237.present": "true"}, True, True),
        ({"feature.node.kubernetes.io/pci-10de_2237.present": "true"}, False, False),
        # NVIDIA/gpu-operator#438: class-only labels, no vendor at all
        ({"feature.node.kubernetes.io/pci-0302.present": "true",
          "feature.node.kubernetes.io/pci-0200.present": "true"}, True, True),
        ({"feature.node.kubernetes.io/pci-0302_10de.present": "true"}, True, False),
        ({"feature.node.kubernetes.io/pci-10de.present": "true"}, True, False),
        ({"kubernetes.io/hostname": "gpu-wk-01"}, True, False),  # NFD has not labelled it at all
    ],
)
def test_nfd_labels_without_the_vendor_label_the_operator_reads(
        labels: dict[str, str], operator: bool, missed: bool) -> None:
    assert nfd_missed_vendor(labels, operator) is missed


def _operator_log(*lines: str) -> LogFile:
    return LogFile("logs/gpu-operator/gpu-operator-6d9b7c9f8-x2x7q/gpu-operator.log", "gpu-operator",
                   "gpu-operator-6d9b7c9f8-x2x7q", "gpu-operator", False, lines)


#: The GPU Operator's reconcile error as the v23.9.1 release notes quote it (the API server
#: refuses an NVIDIADriver status whose state is empty), cut where the log wrapped the record.
_INVALID = ('{"level":"error","ts":1698702848.8472972,"msg":"NVIDIADriver.nvidia.com \\"gpu-driver\\" is '
            'invalid: state: Unsupported value: \\"\\": supported values: \\"ignored\\", \\"ready\\", '
            '\\"notReady\\"","controller":"nvidia-driver-')


def test_a_controller_refused_by_the_api_servers_validation_keeps_failing() -> None:
    wrapped = 'controller","object":{"name":"gpu-driver"},"reconcileID":"78d58d7b-cd94"}'
    found = controller_finding(KB, "gpu-operator", [_operator_log(_INVALID, wrapped)])
    assert found is not None and found.cause == "error_config_invalid"
    # a record after it that is no error (the next reconcile went through) clears it
    healed = '{"level":"info","ts":1698702850.1,"msg":"Reconciling NVIDIADriver","name":"gpu-driver"}'
    assert controller_finding(KB, "gpu-operator", [_operator_log(_INVALID, wrapped, healed)]) is None


#: The NVIDIA drop-in the toolkit wrote on a k0s node from another containerd's config dump
#: (NVIDIA/gpu-operator#1323, trimmed after the nvidia runtime entry).
_K0S_DROPIN = """disabled_plugins = ["cri"]
imports = ["/etc/containerd/config.toml"]
version = 2

[plugins]
  [plugins."io.containerd.grpc.v1.cri"]
    [plugins."io.containerd.grpc.v1.cri".containerd]
      default_runtime_name = "nvidia"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]
        runtime_type = "io.containerd.runc.v2"
        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]
          BinaryName = "/usr/local/nvidia/toolkit/nvidia-container-runtime"
"""


def test_a_containerd_config_that_turns_the_cri_plugin_off() -> None:
    path = "/etc/k0s/containerd.d/nvidia.toml"
    assert _cri_disabled(path, _K0S_DROPIN) == ["cri"]
    assert _defines_nvidia(path, _K0S_DROPIN)
    # NVIDIA/gpu-operator#1367: the MicroK8s template with Docker's containerd settings on top
    template = 'disabled_plugins = ["cri"]\nimports = ["/etc/containerd/config.toml"]\nversion = 2\n'
    assert _cri_disabled("/var/snap/microk8s/current/args/containerd-template.toml", template) == ["cri"]
    # the same drop-in as the toolkit writes it from the node's own config: nothing disabled
    healthy = _K0S_DROPIN.replace('disabled_plugins = ["cri"]\n', 'disabled_plugins = []\n')
    assert _cri_disabled(path, healthy) == []
    assert _cri_disabled(path, "version = 2\n[plugins\n") == []  # unparseable: other checks say so


def test_a_shells_command_not_found_exit_status() -> None:
    # NVIDIA/gpu-operator#1099: RKE2's embedded containerd is not on the host's PATH, so the
    # toolkit's `containerd config dump` exits 127 (POSIX shells: command not found)
    line = ("error running nvidia-toolkit: unable to determine runtime options: unable to load containerd "
            "config: failed to load config: failed to run command chroot [/host containerd config dump]: "
            "exit status 127")
    assert KB.class_of(line) == "error_not_found"
    assert KB.class_of("failed to run command chroot [/host nvidia-smi]: exit status 126") \
        == "error_permission_denied"  # found but not executable
    # the toolkit's main wraps every error in "error running nvidia-toolkit": that alone says
    # nothing about containerd's config
    assert KB.catalogued_in("container-toolkit", line) is None
    setup = ('level=fatal msg="error running nvidia-toolkit: unable to setup runtime: error running '
             'containerd command: exit status 1"')
    assert KB.catalogued_in("container-toolkit", setup) is not None


def test_a_runtime_journal_that_ends_refusing_its_configuration() -> None:
    # NVIDIA/nvidia-docker#787: dockerd will not start when a directive is both a flag (the
    # nvidia-docker2 unit's --add-runtime) and a key of daemon.json
    refused = ("unable to configure the Docker daemon with file /etc/docker/daemon.json: the following "
               "directives are specified as a flag and in the configuration file: runtimes: (from flag: "
               "[nvidia], from file: map[nvidia:map[path:nvidia-container-runtime runtimeArgs:[]]])")
    assert KB.class_of(refused) == "error_config_invalid"
    journal = LogFile("nodes/gpu-wk-01/cmd/journal-runtime.txt", "", "", "", False,
                      ("Starting Docker Application Container Engine...", refused))
    found = running_finding(KB, "container-runtime", [journal])
    assert found is not None and found.cause == "error_config_invalid"
    # a journal whose last record is a routine lookup of a container deleted since is no such refusal
    routine = ('level=error msg="ContainerStatus for \\"4f2c\\" failed" error="rpc error: code = NotFound '
               'desc = an error occurred when try to find container \\"4f2c\\": not found"')
    assert KB.class_of(routine) != "error_config_invalid"


def test_a_refusal_wrapped_in_gos_struct_notation_still_ends_the_log() -> None:
    # NVIDIA/gpu-operator#1349: the rule the operator may not grant, printed as a Go struct on
    # the next line, is the rest of the record, not a new record that healed it
    refused = ('Failed to reconcile state-vfio-manager: clusterroles.rbac.authorization.k8s.io '
               '"nvidia-vfio-manager" is forbidden: user "system:serviceaccount:gpu-operator:gpu-operator" '
               'is attempting to grant RBAC permissions not currently held:')
    rule = '      {APIGroups:[""], Resources:["pods"], Verbs:["patch"]}'
    found = controller_finding(KB, "gpu-operator", [_operator_log(refused, rule)])
    assert found is not None and found.cause == "error_permission_denied"


def test_a_reconcilers_panic_with_its_trace_after_it_keeps_failing() -> None:
    # NVIDIA/gpu-operator#2417: the panic is the last record; its frames follow it
    log = _operator_log("panic: runtime error: invalid memory address or nil pointer dereference",
                        "  controllers.(*UpgradeReconciler).Reconcile",
                        "    /workspace/controllers/upgrade_controller.go:172")
    found = controller_finding(KB, "gpu-operator", [log])
    assert found is not None and found.cause == "error_unclassified"
    healed = '{"level":"info","ts":1698702850.1,"msg":"Reconciling ClusterPolicy"}'
    assert controller_finding(KB, "gpu-operator", [_operator_log(*log.lines, healed)]) is None


@pytest.mark.parametrize(("line", "cls"), [
    # a value read elsewhere that is not a number: the program's own failure to read it
    ('failed to retrieve GPU node OS tag: error processing OS major version v1: strconv.Atoi: '
     'parsing "v1": invalid syntax', "error_unclassified"),
    ('infiniband collector failed after 0.006976s: strconv.ParseUint: parsing "N/A (no PMA)": '
     'invalid syntax', "error_unclassified"),
    # where the line names the configuration, its value is invalid
    ('could not parse ":9400" as int value for flag port: strconv.ParseInt: parsing ":9400": '
     'invalid syntax', "error_config_invalid"),
])
def test_a_number_that_does_not_parse_is_a_configuration_only_where_one_is_named(line: str, cls: str) -> None:
    cause = KB.line_class(line)
    assert cause is not None and cause.code == cls


def _worker_log(*lines: str) -> LogFile:
    return LogFile("logs/gpu-operator/nfd-worker-748z9/worker.log", "gpu-operator", "nfd-worker-748z9",
                   "worker", False, lines)


_RECONNECTING = ('W1027 04:06:26.672234       1 component.go:41] [core]grpc: addrConn.createTransport failed '
                 'to connect to {gpu-operator-node-feature-discovery-master:8080 <nil> 0 <nil>}. Err: '
                 'connection error: desc = "transport: Error while dialing dial tcp: lookup '
                 'gpu-operator-node-feature-discovery-master on 10.43.0.10:53: no such host". '
                 'Reconnecting...')


def test_a_running_component_whose_last_line_is_its_own_catalogued_failure_is_degraded() -> None:
    # NVIDIA/gpu-operator#429: a warning while it retries, yet no label is published
    found = running_finding(KB, "nfd", [_worker_log(_RECONNECTING)])
    assert found is not None and found.cause == "nfd_master_unreachable"
    connected = "I1027 04:06:31.000000       1 nfd-worker.go:400] feature discovery completed"
    assert running_finding(KB, "nfd", [_worker_log(_RECONNECTING, connected)]) is None


def _exporter_log(*lines: str) -> LogFile:
    return LogFile("logs/gpu-operator/nvidia-dcgm-exporter-lsdj6/nvidia-dcgm-exporter.log", "gpu-operator",
                   "nvidia-dcgm-exporter-lsdj6", "nvidia-dcgm-exporter", False, lines)


def test_an_error_that_makes_a_component_fall_back_to_defaults_degrades_it() -> None:
    # NVIDIA/gpu-operator#400: the metrics ConfigMap could not be read, the exporter serves
    # its default counters for the rest of the run
    timeout = ('time="2022-08-19T07:26:21Z" level=info msg="Could not retrieve ConfigMap '
               '\'gpu-monitor:exporter-metrics-config-map\': Get '
               '\\"https://10.0.0.1/api/v1/namespaces/gpu-monitor/configmaps/x\\": '
               'dial tcp 10.0.0.1:443: i/o timeout, falling back to metric file '
               '/etc/dcgm-exporter/default-counters.csv"')
    serving = 'time="2022-08-19T07:26:21Z" level=info msg="Starting webserver"'
    found = running_finding(KB, "dcgm-exporter", [_exporter_log(timeout, serving)])
    assert found is not None and found.cause == "error_unreachable"
    # no error: the fallback is what it was configured to do
    default = ('time="2023-01-05T16:23:09Z" level=info msg="No configmap data specified, falling back to '
               'metric file /etc/dcgm-exporter/dcp-metrics-included.csv"')
    assert running_finding(KB, "dcgm-exporter", [_exporter_log(default, serving)]) is None


def test_a_command_the_installed_tool_does_not_know_is_a_version_mismatch() -> None:
    # kubernetes-sigs/dra-driver-nvidia-gpu#568: a CDI spec written for a newer nvidia-ctk
    line = ("error running createContainer hook #5: exit status 3, stdout: , stderr: No help topic for "
            "'disable-device-node-modification': unknown")
    cause = KB.line_class(line)
    assert cause is not None and cause.code == "error_version_mismatch"


def test_a_container_that_succeeded_tells_only_of_failures_it_got_past() -> None:
    from gpunode.checks.signatures import _succeeded

    def pod(state: dict[str, object]) -> Pod:
        return msgspec.convert({"metadata": {"name": "nvidia-operator-validator-rqvn2"}, "status": {
            "initContainerStatuses": [{"name": "driver-validation", "state": state}]}}, Pod)

    done = {"terminated": {"exitCode": 0, "reason": "Completed", "finishedAt": "2025-05-12T14:25:10Z"}}
    failed = {"terminated": {"exitCode": 1, "reason": "Error", "finishedAt": "2025-05-12T14:25:10Z"}}
    assert _succeeded(pod(done), "driver-validation")
    assert not _succeeded(pod(failed), "driver-validation")
    assert not _succeeded(pod({"waiting": {"reason": "CrashLoopBackOff"}}), "driver-validation")
    assert not _succeeded(pod(done), "toolkit-validation")


@pytest.mark.parametrize(("line", "cls"), [
    # open-telemetry filelog: its checkpoint database holds data it cannot decode
    ("Error: cannot start pipelines: start stanza: read known files from database: illegal base64 data "
     "at input byte 2281", "error_file_state"),
    ("checkpoint file is corrupted", "error_file_state"),
    # containerd generating a spec over a host mount without shared propagation
    ('failed to generate spec: path "/run/nvidia/validations" is mounted on "/run" but it is not a '
     'shared mount', "error_file_state"),
    # a device plugin's own refusal at admission
    ("rpc error: code = Unknown desc = failed to find gpu id", "error_not_found"),
])
def test_classes_of_corrupt_data_mounts_and_lookups(line: str, cls: str) -> None:
    cause = KB.line_class(line)
    assert cause is not None and cause.code == cls
