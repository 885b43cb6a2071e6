"""The decisive line: general rules for the line that ends a component, and its class.

Lines are real ones from the formats the stack writes (logrus, zap, klog, shell, apt,
kernel); the field corpus (tests/field) tries the rules on public failure reports.
"""

from __future__ import annotations

import pytest

from gpunode.catalog import load_catalog
from gpunode.decisive import decisive_line, message_of, severity, shown
from gpunode.explain import explain_lines
from gpunode.kb import load_kb

KB = load_kb()


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('time="2024-01-02T03:04:05Z" level=fatal msg="failed to open /etc/x.csv"', 2),
        ('{"level":"error","ts":1.0,"msg":"Reconciler error","error":"boom"}', 2),
        ("E1205 10:01:02.123456       1 main.go:12] error starting plugins", 2),
        ("FATA[0000] Failed to watch metrics: Host engine is running as non-root", 2),
        ("Error: failed to create FS watcher: too many open files", 2),
        ("panic: runtime error: invalid memory address or nil pointer dereference", 2),
        ("E: Unable to locate package linux-headers-5.15.0-1053-azure", 2),
        ("Failed loading kernel module mlx5_ib:[FAILED[]", 1),
        ('time="x" level=info msg="Error: error creating symlink: file exists"', 1),
        ('time="x" level=info msg="Could not retrieve ConfigMap, falling back to metric file"', 0),
        ("I1205 10:01:02.123456       1 main.go:12] failed=0 retries", 0),
        ("WARNING: Unable to determine the default X library path.", 0),
        ("Retrying in 5s: connection refused", 0),
        # the API server's advice in a conflict is no retry of the program's own
        # (kubernetes-sigs/node-feature-discovery#122)
        ('2018/04/18 11:00:27 failed to advertise labels: Operation cannot be fulfilled on nodes '
         '"k8-vm-2": the object has been modified; please apply your changes to the latest version '
         'and try again', 1),
        ("connection lost, will wait and try again", 0),
        ("NVRM: Xid (PCI:0000:a1:00): 13, pid=1, name=python, Graphics Exception", 0),
        ("Starting NVIDIA persistence daemon...", 0),
        ("Dec 05 10:01:02 gpu-wk-01 kubelet[812]: E1205 10:01:02.1 1 x.go:1] runtime is down", 2),
        ("W0801 16:40:09.2 1 reflector.go:547] x.go:106: failed to list *v1.ConfigMap: forbidden", 2),
        ("W0801 16:40:09.2 1 main.go:5] failed to list devices, using the defaults", 0),
        ("Failed to start plugin: error waiting for MPS daemon", 1),
        ("Waiting for the driver to load", 0),
        ("unknown GPU sharing strategy: TimeSlicing", 1),
        ("Using GPU sharing strategy: TimeSlicing", 0),
        ("Error getting GPU instance profile info for '1g.6gb': ERROR_NOT_SUPPORTED", 1),
        ("the ERROR_free build", 0),
        # the kernel's oops header; its other BUG lines are warnings
        ("[  812.3] kernel BUG at lib/list_debug.c:23!", 2),
        ("BUG: unable to handle page fault for address: ffffb4c2c0a00000", 2),
        ("BUG: scheduling while atomic: swapper/0/0/0x00000002", 0),
        # a level set off by dashes (Python logging's format, a C library's "Error - ")
        ("libspdm_check_crypto_backend: Error - libspdm expects LKCA but found stubs!", 2),
        ("2024-05-01 10:00:00,123 - trainer - ERROR - step 12 diverged", 2),
        ("2024-05-01 10:00:00,123 - trainer - WARNING - slow step", 0),
        ("no error - all good", 0),
    ],
)
def test_severity_reads_the_log_formats(line: str, expected: int) -> None:
    assert severity(line) == expected


def test_the_last_error_ends_the_log_and_retries_do_not() -> None:
    lines = [
        'time="t" level=info msg="Starting dcgm-exporter"',
        'time="t" level=error msg="Could not connect, will retry"',
        'time="t" level=error msg="Could not read metrics file \'/etc/x.csv\': '
        'record on line 3: wrong number of fields"',
        'time="t" level=fatal msg="record on line 3: wrong number of fields"',
        'time="t" level=info msg="Shutting down"',
    ]
    found = decisive_line(lines, KB.class_of)
    assert found is not None
    # the fatal only repeats the error before it, which says more
    assert found.line_no == 3 and found.strength == 2
    assert found.message.startswith("Could not read metrics file")
    assert KB.class_of(found.message) == "error_config_invalid"


def test_a_bare_wrapper_gives_way_to_the_specific_error_before_it() -> None:
    lines = ["+ modprobe nvidia",
             "modprobe: ERROR: could not insert 'nvidia': Key was rejected by service",
             "Error: exit status 1"]
    found = decisive_line(lines, KB.class_of)
    assert found is not None and found.line_no == 2
    assert KB.class_of(found.message) == "error_module_load"


def test_no_error_line_no_decisive_line() -> None:
    assert decisive_line(["Starting", "level=info msg=\"ready\"", ""]) is None


@pytest.mark.parametrize(
    ("message", "cls"),
    [
        ("failed to open /etc/dcgm-exporter/custom.csv: no such file or directory", "error_file_state"),
        ('configmaps is forbidden: User "system:serviceaccount:x" cannot get it', "error_permission_denied"),
        ("Failed to initialize NVML: Driver/library version mismatch", "error_version_mismatch"),
        ("dial tcp 10.96.0.1:443: i/o timeout", "error_unreachable"),
        ("E: Unable to locate package linux-headers-6.8.0-1017-aws", "error_not_found"),
        # Go lookups by name (NVIDIA's driver-root helpers, DRA plugin, validator, toolkit)
        ('failed to locate driver libraries: error locating "libnvidia-ml.so.1"', "error_not_found"),
        ("failed to locate nvidia-smi: not in /driver-root", "error_not_found"),
        ("Located libnvidia-ml.so.1 at /driver-root/usr/lib/x86_64-linux-gnu", None),
        ("write /run/nvidia/driver: no space left on device", "error_resource_exhausted"),
        ("failed to parse config file: yaml: line 84: mapping values are not allowed in this context",
         "error_config_invalid"),
        ("nvml: Insufficient Permissions", "error_permission_denied"),
        ("NVRM: RmInitAdapter failed! (0x22:0x38:662)", "error_device"),
        ("symbol lookup error: /lib/libc.so.6: undefined symbol: __tunable_init, version GLIBC_PRIVATE",
         "error_version_mismatch"),
        ("Error getting GPU instance profile info for '1g.6gb': ERROR_NOT_SUPPORTED", "error_device"),
        ("nvidia-container-cli: requirement error: invalid expression", "error_config_invalid"),
        # a claim's or flag's setting the program does not know, or one behind a gate left off
        ("error validating GPU config: unknown GPU sharing strategy: TimeSlicing", "error_config_invalid"),
        ("unknown strategy: mixd", "error_config_invalid"),
        # a ConfigMap whose name holds "config" that does not exist is not found (the kubelet's
        # configmap volume plugin; sirzzang.github.io time-slicing lab); a config that fails to
        # load stays invalid
        ('MountVolume.SetUp failed for volume "config" : configmap "time-slicing-config" not found',
         "error_not_found"),
        ("failed to load config: toml: line 12: expected '.' or '='", "error_config_invalid"),
        ('"TimeSlicing" is selected as the GPU sharing strategy, but the "TimeSlicingSettings" '
         "feature gate is not enabled", "error_config_invalid"),
        ("Using GPU sharing strategy: TimeSlicing", None),
        ("unexpected state: reconcile loop aborted", None),
    ],
)
def test_classes_in_their_precedence(message: str, cls: str | None) -> None:
    assert KB.class_of(message) == cls


def test_message_drops_framing_and_a_long_chain_shows_its_innermost_errors() -> None:
    assert message_of('time="t" level=error msg="a \\"b\\" c" error="d"') == 'a "b" c: d'
    assert message_of("E1205 10:01:02.123456       1 main.go:12] boom") == "boom"
    chain = ": ".join(f"wrapper number {i}" for i in range(30)) + ": read-only file system"
    assert shown(chain).startswith("…") and shown(chain).endswith("read-only file system")


def test_an_error_names_the_layer_it_belongs_to() -> None:
    catalog = load_catalog()
    hook = "error running hook #0: nvidia-container-cli: initialization error: driver error: timed out"
    assert catalog.named_in(hook) == "driver"  # the lowest layer named
    assert catalog.named_in("createContainer hook #6: exit status 1, stderr: read-only file system") \
        == "container-toolkit"
    assert catalog.named_in("failed to pull image: manifest unknown") is None


def test_a_vm_launchers_vfio_error_names_the_binding_or_the_sandbox_plugin() -> None:
    """VM passthrough: QEMU/libvirt report the VFIO binding of an IOMMU group (the
    vfio-manager's job) apart from the device nodes and PCI devices the sandbox device
    plugin allocated; both are device errors. Lines as reported in
    NVIDIA/kubevirt-gpu-device-plugin issues 27 and 147 and kubevirt/kubevirt issue 18895."""
    catalog = load_catalog()
    group = ("qemu-kvm: -device vfio-pci,host=0000:01:00.0,id=hostdev0: vfio 0000:01:00.0: group 1 "
             "is not viable Please ensure all devices within the iommu_group are bound to their vfio bus "
             "driver.")
    attached = "QMP command failed: vfio 0000:65:00.0: device is already attached"
    cdev = "lstat /dev/vfio/devices/vfio0: no such file or directory"
    assert catalog.named_in(group) == "vfio-manager"
    assert catalog.named_in(attached) == "sandbox-device-plugin"
    assert catalog.named_in(cdev) == "sandbox-device-plugin"
    assert KB.class_of(attached) == KB.class_of(group) == "error_device"
    assert catalog.named_in("vfio-pci 0000:01:00.0: enabling device (0000 -> 0003)") is None


def test_a_cdi_device_name_opened_as_a_path_names_the_runtime() -> None:
    """A runtime without CDI support (Podman 3) stats the requested CDI device name
    (vendor/class=name) as a host file: the runtime, not the toolkit's spec, is at fault.
    Line as reported in NVIDIA/nvidia-container-toolkit issue 63."""
    catalog = load_catalog()
    line = "Error: stat nvidia.com/gpu=0: no such file or directory"
    assert catalog.named_in(line) == "container-runtime"
    assert KB.class_of(line) == "error_file_state"
    assert catalog.named_in("Error: stat /dev/nvidia0: no such file or directory") != "container-runtime"


def test_a_volume_under_a_mount_the_runtime_does_not_share_names_the_runtime() -> None:
    """containerd builds the spec of a pod whose hostPath volume asks for Bidirectional
    propagation under a host mount its mount namespace does not share: the runtime's (and the
    host's) mount setup refuses it, whichever pod asked. Line as reported in
    NVIDIA/gpu-operator issue 315 (strict MicroK8s, the toolkit's /run/nvidia/validations)."""
    catalog = load_catalog()
    line = ('Error: failed to generate container '
            '"4f9f599983966384f285f14cada1b56b7697cb05d5219fcba3f815d0fc3249b2" spec: failed to generate '
            'spec: path "/run/nvidia/validations" is mounted on "/run" but it is not a shared mount')
    assert catalog.named_in(line) == "container-runtime"
    assert KB.class_of(line) == "error_file_state"
    assert catalog.named_in('path "/run/nvidia/validations" is mounted on "/run"') is None


def test_a_missing_file_of_the_drivers_proc_tree_names_the_driver() -> None:
    """The runtime hook mounts the loaded driver's /proc/driver/nvidia files into the
    container; one that is absent is the driver's state (the loaded module is not the one the
    files on disk describe), though nvidia-container-cli says it. Line as reported in
    NVIDIA/nvidia-docker issue 1068 (fixed by a reboot)."""
    catalog = load_catalog()
    line = ("nvidia-container-cli: mount error: mount operation failed: /home/znxj/dockerRootDir/overlay2/"
            "b9f5385b968a94c6b4f400a73728b66ee7223bf566fb8a3a44d5fdd02855acee/merged/proc/driver/nvidia/"
            "params/version/registry: no such file or directory")
    assert catalog.named_in(line) == "driver"
    assert catalog.named_in("nvidia-container-cli: mount error: mount operation failed: "
                            "/usr/lib/libfoo.so: no such file or directory") == "container-toolkit"


def test_a_missing_versioned_driver_library_at_container_start_names_the_toolkit() -> None:
    """A driver library named with the driver's version that the runtime cannot find when it
    creates a container: the mount list the toolkit generated (a CDI spec) predates the
    driver installed since. Podman appends its OCI error kind after the runtime's message:
    the kind is no cause, the missing file is. Line as reported in
    Igalia/webkit-container-sdk issue 23 (crun, driver 535.161.07 upgraded to 535.171.04)."""
    catalog = load_catalog()
    line = ('Error: unable to start container "ecdb2132": crun: error stat\'ing file '
            "/lib/x86_64-linux-gnu/libEGL_nvidia.so.535.161.07: No such file or directory: "
            "OCI runtime attempted to invoke a command that was not found")
    assert catalog.named_in(line) == "container-toolkit"
    assert KB.class_of(line) == "error_file_state"
    missing = 'exec: "nvidia-smi": executable file not found in $PATH'
    kind = ": OCI runtime attempted to invoke a command that was not found"
    assert KB.class_of(missing + kind) == KB.class_of(missing) is not None
    assert catalog.named_in("libnvidia-ml.so.1: cannot open shared object file") != "container-toolkit"


def test_explain_answers_an_unknown_failure_with_its_line_and_class() -> None:
    text = ["level=info msg=start",
            'level=fatal msg="failed to open /etc/custom.csv: no such file or directory"']
    found = explain_lines(text, KB)
    assert found.decisive is not None and found.decisive.line_no == 2
    assert found.decisive_class == "error_file_state"
    assert [m.cause.code for m in found.matches] == ["error_file_state"] and found.problems


def test_explain_keeps_a_catalogued_cause_first() -> None:
    found = explain_lines(["Could not resolve Linux kernel version"], KB)
    assert found.matches[0].cause.code == "kernel_headers_missing"
    assert all(m.cause.component != "*" for m in found.matches)


def test_explain_stays_silent_on_healthy_text() -> None:
    found = explain_lines(["Starting", "Registered device plugin for 'nvidia.com/gpu' with Kubelet"], KB)
    assert not found.matched and found.decisive is None


def test_the_toolkits_ldconfig_missing_under_a_driver_root_is_the_wrong_ldconfig_path() -> None:
    """The runtime hook runs the toolkit's ldconfig inside the driver root the GPU Operator
    mounts (/run/nvidia/driver); a CentOS driver image has /sbin/ldconfig and no
    ldconfig.real, the Ubuntu name the toolkit was set to. Line as reported in
    NVIDIA/gpu-operator issue 133."""
    line = ("nvidia-container-cli.real: ldcache error: open failed: /run/nvidia/driver/sbin/ldconfig.real: "
            "no such file or directory: unknown")
    assert explain_lines([line], KB).matches[0].cause.code == "toolkit_ldconfig_path_wrong"
    other = "nvidia-container-cli: ldcache error: open failed: /etc/ld.so.cache: no such file or directory"
    assert all(m.cause.code != "toolkit_ldconfig_path_wrong" for m in explain_lines([other], KB).matches)


def test_a_debug_or_trace_line_with_an_error_field_is_no_error() -> None:
    # nvidia_gpu_exporter skips nvidia-smi's text fields at debug level (its #115)
    debug = ('ts=2023-07-18T07:23:20.116Z caller=exporter.go:209 level=debug error="could not parse number '
             'from value: 535.54.03" query_field_name=driver_version raw_value=535.54.03')
    assert severity(debug) == 0
    assert severity('{"level":"trace","msg":"probe","error":"connection refused"}') == 0
    assert decisive_line([debug, debug]) is None
    # the same field at info level still reports the error it carries
    assert severity(debug.replace("level=debug", "level=info")) == 1
