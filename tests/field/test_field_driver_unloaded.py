"""A node whose driver never loaded (no nvidia module in lsmod, no nvidia-smi, no
/proc/driver/nvidia/version) is explained by the driver's own installer, and the components
above it are blocked by the driver: the host installer's log (its catalogued line, else the
class of its decisive line), or GKE's driver installer init container that never finished (its
line, else the driver not loaded). Look-alikes stay silent: the same log on a node whose driver
is loaded, a bundle without node files (unknown, not failed), an installer that finished."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from builder import build_case
from case import Case, synthetic_case
from scoreboard import top_pair

from gpunode.bundle.load import load_bundle, read_node_observations
from gpunode.diagnose import diagnose
from gpunode.kb import load_kb
from gpunode.model import Report, Status

NODE = "gpu-wk-01"


def _log(text: str) -> dict[str, Any]:
    return {"kind": "node-file", "path": "var/log/nvidia-installer.log", "text": text}


def _host(*evidence: dict[str, Any], loaded: bool | None = None) -> Case:
    gpu_node: dict[str, Any] = {} if loaded is None else {"driver_loaded": loaded}
    return synthetic_case("x-driver-unloaded", list(evidence), healthy=False,
                          cluster={"driver_mode": "host", "gpu_node": gpu_node})


#: nvidia-installer refusing to go on without a compiler (its check of the development tools):
#: no catalogued cause, the not-found class.
NO_CC = ("ERROR: Unable to find the development tool `cc` in your path; please make sure that you have "
         "the package 'gcc' installed.  If gcc is installed on your system, then please check that `cc` "
         "is in your PATH.\n")
#: nvidia-installer after insmod refused an unsigned module on a Secure Boot host: the same words
#: the driver container prints (its catalogued signature).
SECURE_BOOT = ("ERROR: The kernel module failed to load. Secure boot is enabled on this system, so this is "
               "likely because it was not signed by a key that is trusted by the kernel. Please try "
               "installing the driver again, and sign the kernel module when prompted to do so.\n")
#: Azure/aks-engine#3269: DKMS could not build 418.40.04 for 5.3.0-1020-azure.
DKMS = ("ERROR: Failed to run `/usr/sbin/dkms build -m nvidia -v 418.40.04 -k\n"
        "       5.3.0-1020-azure`: \n"
        "       'make' -j6 NV_EXCLUDE_BUILD_MODULES='nvidia-drm '\n"
        "       KERNEL_UNAME=5.3.0-1020-azure IGNORE_CC_MISMATCH='1' modules....(bad\n"
        "       exit status: 2)\n")


def _report(case: Case, tmp_path: Path, *, drop: tuple[str, ...] = ()) -> Report:
    out = build_case(case, tmp_path / case.id)
    for name in drop:
        (out / "nodes" / NODE / name).unlink(missing_ok=True)
    return diagnose(load_bundle(out), read_node_observations)


def _components(report: Report) -> dict[str, Any]:
    node = next(n for n in report.nodes if n.name == NODE)
    return {c.component: c for c in node.components}


def test_a_dkms_build_that_stopped_the_install_is_the_driver_and_blocks_the_stack(tmp_path: Path) -> None:
    report = _report(_host(_log(DKMS)), tmp_path)
    node = next(n for n in report.nodes if n.name == NODE)
    top = node.root_causes[0]
    assert (top.component, top.cause) == ("driver", "driver_kernel_incompatible")
    above = [c for c in node.components if c.status == Status.FAILED and c.component != "driver"]
    assert above and all("driver" in c.blocked_by for c in above)


def test_the_driver_container_s_words_in_the_host_installer_log_name_its_cause() -> None:
    assert top_pair(_host(_log(SECURE_BOOT))) == ("driver", "secure_boot_enabled")


def test_an_installer_line_no_cause_names_is_its_class() -> None:
    assert top_pair(_host(_log(NO_CC), loaded=False)) == ("driver", "error_not_found")


#: nvidia-installer's test load of nvidia-drm refused, then its closing summary
#: (NVIDIA/nvidia-installer kernel.c, install-from-cwd.c).
DRM = ("ERROR: Unable to load the 'nvidia-drm' kernel module.\n"
       "ERROR: Installation has failed.  Please see the file '/var/log/nvidia-installer.log' for details.  "
       "You may find suggestions on fixing installation problems in the README available on the Linux "
       "driver download page at www.nvidia.com.\n")


def test_a_module_the_installer_could_not_load_is_the_module_load_class_not_its_summary() -> None:
    assert top_pair(_host(_log(DRM), loaded=False)) == ("driver", "error_module_load")


def test_the_installer_s_module_words_are_the_module_load_class() -> None:
    kb = load_kb()
    assert kb.class_of("ERROR: Unable to load the 'nvidia-drm' kernel module.") == "error_module_load"
    assert kb.class_of("ERROR: Unable to unload the 'nvidia' kernel module.") == "error_module_load"
    # look-alike: the installer reporting a module it loaded
    assert kb.class_of("-> Loaded the 'nvidia-drm' kernel module.") != "error_module_load"


def test_a_module_load_refused_on_a_node_whose_driver_is_loaded_is_history() -> None:
    # look-alike: nvidia-drm refused while nvidia.ko is loaded (lsmod lists it): not this rule's
    assert top_pair(_host(_log(DRM), loaded=True)) != ("driver", "error_module_load")


#: nvidia-installer's make step failing, then its closing summary (NVIDIA/nvidia-installer
#: kernel.c's "An error occurred%s. See %s for details.", install-from-cwd.c's summary).
STEP = ("ERROR: An error occurred while performing the step: \"Building kernel modules\". See "
        "/var/log/nvidia-installer.log for details.\n" + DRM.splitlines(keepends=True)[1])


def test_the_installer_s_closing_summary_is_passed_over_for_the_step_that_failed(tmp_path: Path) -> None:
    report = _report(_host(_log(STEP)), tmp_path)
    top = next(n for n in report.nodes if n.name == NODE).root_causes[0]
    assert top.component == "driver" and top.decisive is not None
    assert "Building kernel modules" in top.decisive.line


def test_the_same_log_on_a_node_whose_driver_is_loaded_is_history() -> None:
    # look-alike: the installer's old run, and the driver loaded since (lsmod lists nvidia)
    assert top_pair(_host(_log(NO_CC))) is None
    assert top_pair(_host(_log(DKMS), loaded=True)) is None


def test_a_bundle_without_the_node_s_modules_leaves_the_driver_unknown(tmp_path: Path) -> None:
    # look-alike: the installer log but no lsmod collected: the module is not known to be absent
    report = _report(_host(_log(NO_CC), loaded=False), tmp_path, drop=("cmd/lsmod.txt",))
    assert _components(report)["driver"].status != Status.FAILED


GKE_LABELS = {"kind": "node-labels", "labels": {"cloud.google.com/gke-accelerator": "nvidia-tesla-t4"}}
GKE = {"driver_mode": "host", "components": [], "runtime_class": False,
       "gpu_node": {"gpu": "Tesla-T4", "gpus": 1}}


def _gke(*evidence: dict[str, Any]) -> Case:
    return synthetic_case("x-gke-installer-init", [GKE_LABELS, *evidence], platform="gke", healthy=False,
                          cluster=GKE)


def _installer(state: str, text: str | None = None) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if text is not None:
        out.append({"kind": "log", "component": "gke-device-plugin", "container": "nvidia-driver-installer",
                    "init": True, "text": text})
    out.append({"kind": "pod-state", "component": "gke-device-plugin", "container": "nvidia-driver-installer",
                "state": state})
    return out


def test_gke_s_installer_init_container_that_never_finished_is_the_driver_not_loaded() -> None:
    # container-engine-accelerators#402's shape without its log: the state alone
    assert top_pair(_gke(*_installer("Init:0/1"))) == ("driver", "driver_not_loaded")


def test_gke_s_installer_s_error_line_is_its_class() -> None:
    # GKE's Ubuntu installer asking for a driver package that was never published
    # (GoogleCloudPlatform/container-engine-accelerators#382), in the init container's log
    text = ("HTTP request sent, awaiting response... 404 Not Found\n"
            "2024-05-31 17:59:39 ERROR 404: Not Found.\n"
            "The requested driver does not exist. Please check that the NVIDIA_DRIVER_VERSION variable "
            "passed into the daemonset is correct\n")
    assert top_pair(_gke(*_installer("Init:CrashLoopBackOff", text))) == ("driver", "error_not_found")


def test_a_waiting_installer_on_a_node_whose_driver_is_loaded_is_not_the_driver() -> None:
    # look-alike: the installer still in Init where the node's driver is loaded (lsmod lists it):
    # whatever holds the plugin, it is not a driver that never loaded
    loaded = {**GKE, "gpu_node": {"gpu": "Tesla-T4", "gpus": 1, "driver_loaded": True}}
    case = synthetic_case("x-gke-installer-loaded", [GKE_LABELS, *_installer("Init:0/1")], platform="gke",
                          healthy=False, cluster=loaded)
    assert top_pair(case) != ("driver", "driver_not_loaded")


def _make_log(text: str, version: str = "550.54.14") -> dict[str, Any]:
    return {"kind": "node-file", "path": f"var/lib/dkms/nvidia/{version}/build/make.log", "text": text}


#: The driver's kbuild compiler check stopping DKMS's build (Bumblebee-Project/Bumblebee#712's
#: words): the kernel was built by another compiler than the one installed.
CC_CHECK = ("warning: the compiler differs from the one used to build the kernel\n"
            "  The kernel was built by: gcc-12 (Debian 12.2.0-14) 12.2.0\n"
            "  You are using:           gcc (Debian 14.2.0-8) 14.2.0\n"
            "*** Failed CC version check. Bailing out! ***\n"
            "make[2]: *** [/var/lib/dkms/nvidia/550.54.14/build/Kbuild:212: cc_version_check] Error 1\n")
#: A DKMS build stopped by the compiler's error in a source file of the driver's own tree (the
#: sources do not fit the kernel's interfaces).
COMPILE = ("DKMS make.log for nvidia-550.54.14 for kernel 6.11.0-9-generic (x86_64)\n"
           "/var/lib/dkms/nvidia/550.54.14/build/nvidia/nv.c:42:5: error: implicit declaration of "
           "function 'foo_bar' [-Werror=implicit-function-declaration]\n"
           "make[3]: *** [scripts/Makefile.build:244: "
           "/var/lib/dkms/nvidia/550.54.14/build/nvidia/nv.o] Error 1\n")
#: A build that finished: make's lines with no error.
BUILT = ("DKMS make.log for nvidia-550.54.14 for kernel 6.8.0-45-generic (x86_64)\n"
         "  LD [M]  /var/lib/dkms/nvidia/550.54.14/build/nvidia.ko\n"
         "make[1]: Leaving directory '/usr/src/linux-headers-6.8.0-45-generic'\n")


def test_dkms_s_make_log_of_a_failed_build_names_the_driver_s_cause() -> None:
    # the driver container's words for the compiler check, read in DKMS's build log
    assert top_pair(_host(_make_log(CC_CHECK))) == ("driver", "gcc_mismatch")


def test_a_compile_error_in_the_dkms_tree_is_the_driver_release_not_fitting_the_kernel() -> None:
    assert top_pair(_host(_make_log(COMPILE))) == ("driver", "driver_kernel_incompatible")


#: NVIDIA/open-gpu-kernel-modules#1272 (550.163.01 on Debian's 6.12.100): kbuild names the
#: module's own source relative to its tree, the kernel's header beside it in a note.
RELATIVE = ("nv-pci.c: In function 'nv_resize_pcie_bars':\n"
            "nv-pci.c:237:9: error: too few arguments to function 'pci_resize_resource'\n"
            "include/linux/pci.h:1421:18: note: declared here\n")
#: The same tree's warnings with no error (the build went on), and its header the compiler
#: could not open (the headers' fault, read by its own class).
WARNED = ("nv-acpi.c:103:17: warning: unused variable 'nv' [-Wunused-variable]\n"
          "  LD [M]  /var/lib/dkms/nvidia/550.54.14/build/nvidia.ko\n")


def test_a_compile_error_the_dkms_tree_names_relative_is_the_release_not_fitting_the_kernel() -> None:
    assert top_pair(_host(_make_log(RELATIVE), loaded=False)) == ("driver", "driver_kernel_incompatible")
    log = {"kind": "node-file", "path": "var/lib/dkms/nvidia-open/570.172.08/build/make.log",
           "text": RELATIVE}
    assert top_pair(_host(log, loaded=False)) == ("driver", "driver_kernel_incompatible")


def test_warnings_of_the_dkms_tree_and_another_module_s_compile_error_say_no_incompatibility() -> None:
    # look-alike: warnings only, the driver loaded
    assert top_pair(_host(_make_log(WARNED))) is None
    # look-alike: GPUDirect Storage's DKMS module with the same compile error is not the driver's
    fs_log = {"kind": "node-file", "path": "var/lib/dkms/nvidia-fs/2.20.5/build/make.log", "text": RELATIVE}
    assert top_pair(_host(fs_log, loaded=False)) != ("driver", "driver_kernel_incompatible")


#: NVIDIA/open-gpu-kernel-modules#805: the open DKMS module's build with no C++ compiler, make's
#: recipe failure after the shell's own line.
NO_CXX = (" [ nvidia-modeset    ]  CXX          ../common/displayport/src/dp_auxretry.cpp\n"
          "/bin/sh: line 1: g++: command not found\n"
          "make[1]: *** [Makefile:219: _out/Linux_x86_64/dp_auxretry.o] Error 127\n"
          "make[1]: *** Waiting for unfinished jobs....\n")


def test_a_make_log_line_no_cause_names_is_its_class_not_make_s_recipe_line() -> None:
    assert top_pair(_host(_make_log(NO_CXX))) == ("driver", "error_not_found")


def test_the_open_modules_dkms_name_is_read_as_the_driver_s() -> None:
    log = {"kind": "node-file", "path": "var/lib/dkms/nvidia-open/570.124.06/build/make.log", "text": NO_CXX}
    assert top_pair(_host(log, loaded=False)) == ("driver", "error_not_found")
    # look-alike: GPUDirect Storage's DKMS module is not the driver's
    fs_log = {"kind": "node-file", "path": "var/lib/dkms/nvidia-fs/2.20.5/build/make.log", "text": NO_CXX}
    assert top_pair(_host(fs_log, loaded=False)) != ("driver", "error_not_found")


def test_dkms_s_make_log_says_why_where_the_installer_s_log_gives_only_a_class(tmp_path: Path) -> None:
    report = _report(_host(_log(NO_CC), _make_log(CC_CHECK), loaded=False), tmp_path)
    top = next(n for n in report.nodes if n.name == NODE).root_causes[0]
    assert (top.component, top.cause) == ("driver", "gcc_mismatch")


def test_a_failed_make_log_on_a_node_whose_driver_is_loaded_is_history() -> None:
    # look-alike: a build for another kernel failed, and the driver serves its GPUs (lsmod lists it)
    assert top_pair(_host(_make_log(CC_CHECK), loaded=True)) is None
    # look-alike: a build that finished leaves the node's driver loaded
    assert top_pair(_host(_make_log(BUILT))) is None


def _syslog(text: str) -> dict[str, Any]:
    return {"kind": "node-file", "path": "var/log/messages", "text": text}


#: ComputeCanada/puppet-magic_castle#91: the Puppet agent's vGPU driver install could not fetch
#: its repository package (curl's exit code 7, the server never reached).
REPO = ("Feb  4 11:43:46 gpu-node2 puppet-agent[1074]: (/Stage[main]/Profile::Gpu::Install::Vgpu/"
        "Package[arbutus-cloud-vgpu-repo]/ensure) change from 'absent' to 'present' failed: Execution of "
        "'/usr/bin/rpm -i http://repo.example.org/vgpu-repo.el7.noarch.rpm' returned 1: curl: (7) Failed "
        "connect to repo.example.org:80; Connection timed out\n")


def test_the_driver_s_install_in_syslog_that_never_reached_its_repository() -> None:
    assert top_pair(_host(_syslog(REPO), loaded=False)) == ("driver", "driver_repo_unreachable")


def test_syslog_lines_are_no_verdict_where_they_name_no_cause_or_no_driver() -> None:
    # look-alike: the same line on a node whose driver is loaded (an old run) is history
    assert top_pair(_host(_syslog(REPO), loaded=True)) is None
    # look-alike: another service's download that never reached its server names no GPU
    other = ("Feb  4 11:50:02 gpu-node2 backup[2211]: upload failed: curl: (7) Failed connect to "
             "backup.example.org:443; Connection timed out\n")
    pair = top_pair(_host(_syslog(other), loaded=False))
    assert pair != ("driver", "driver_repo_unreachable")
    # look-alike: a line naming the GPU in no catalogued words is not the driver's verdict
    plain = "Feb  4 11:51:00 gpu-node2 gpu-monitor[77]: error: probe returned 3\n"
    assert top_pair(_host(_syslog(plain), loaded=False)) == top_pair(_host(loaded=False))


def test_curl_s_codes_for_a_server_never_reached_are_the_repository_unreachable() -> None:
    kb = load_kb()
    cause = kb.get("driver_repo_unreachable")
    assert cause is not None

    def says(line: str) -> bool:
        return any(m.regex.search(line) for m in cause.match)

    assert says("curl: (6) Could not resolve host: download.nvidia.com")
    assert says('[Errno 14] curl#7 - "Failed connect to repo.example.org:443; Connection refused"')
    assert says("curl: (28) Operation timed out after 300000 milliseconds with 0 bytes received")
    # look-alikes: a server that answered with an error, another code sharing a digit
    assert not says("curl: (22) The requested URL returned error: 404 Not Found")
    assert not says("curl: (77) error setting certificate verify locations")


#: compiler-explorer/infra#1413: the boot script's modprobe on an image rebuilt with a new driver.
NO_MODULE = ("Dec  3 10:02:11 gpu-wk-01 gpu-start[812]: modprobe: FATAL: Module nvidia not found in "
             "directory /lib/modules/{}\n")


def _kernel_host(text: str, kernel: str, loaded: bool) -> Case:
    return synthetic_case("x-driver-no-module", [_syslog(text)], healthy=False,
                          cluster={"driver_mode": "host",
                                   "gpu_node": {"driver_loaded": loaded, "kernel": kernel}})


def test_modprobe_finding_no_module_for_the_running_kernel_is_the_driver_not_loaded() -> None:
    case = _kernel_host(NO_MODULE.format("6.8.0-1015-aws"), "6.8.0-1015-aws", loaded=False)
    assert top_pair(case) == ("driver", "driver_not_loaded")


def test_modprobe_s_word_is_silent_for_another_kernel_or_a_loaded_driver() -> None:
    # look-alike: a module tree the node does not boot (a build for the next kernel)
    other = _kernel_host(NO_MODULE.format("6.8.0-1020-aws"), "6.8.0-1015-aws", loaded=False)
    assert top_pair(other) == top_pair(_kernel_host("", "6.8.0-1015-aws", loaded=False))
    # look-alike: the same line on a node whose driver is loaded now is history
    assert top_pair(_kernel_host(NO_MODULE.format("6.8.0-1015-aws"), "6.8.0-1015-aws", loaded=True)) is None


def _plugin_says(text: str, loaded: bool) -> Case:
    plugin = {"kind": "log", "component": "device-plugin", "container": "nvidia-device-plugin-ctr",
              "text": text}
    return synthetic_case("x-driver-plugin-nvml", [plugin], healthy=False,
                          cluster={"driver_mode": "host", "device_plugin": "static", "components": [],
                                   "gpu_node": {"driver_loaded": loaded}})


def test_the_plugin_s_nvml_down_on_a_node_without_the_module_is_the_driver_not_loaded() -> None:
    # madhank93/homelab's device plugin page: a Talos node without the NVIDIA extensions
    bare = top_pair(_plugin_says("Failed to initialize NVML\n", loaded=False))
    assert bare == ("driver", "driver_not_loaded")
    said = "E0310 10:00:00.000000 1 main.go:132] Failed to initialize NVML: ERROR_DRIVER_NOT_LOADED\n"
    assert top_pair(_plugin_says(said, loaded=False)) == ("driver", "driver_not_loaded")


def test_the_plugin_s_nvml_down_for_another_reason_or_with_the_module_loaded_is_not_read() -> None:
    # look-alike: a reason that names something else
    other = top_pair(_plugin_says("Failed to initialize NVML: Insufficient Permissions\n", loaded=False))
    assert other != ("driver", "driver_not_loaded")
    # look-alike: the same words with the module loaded are the plugin's or its runtime's
    loaded = top_pair(_plugin_says("Failed to initialize NVML\n", loaded=True))
    assert loaded != ("driver", "driver_not_loaded")


#: Scaleway's GPU Instances troubleshooting (cloud-init's dist-upgrade broke the driver): the
#: persistence daemon's unit failing at boot, in the console's and the journal's forms.
PERSISTENCED_CONSOLE = "[FAILED] Failed to start NVIDIA Persistence Daemon.\n"
PERSISTENCED_JOURNAL = ("Mar  3 08:01:12 gpu-1 systemd[1]: nvidia-persistenced.service: Failed with result "
                        "'exit-code'.\n"
                        "Mar  3 08:01:12 gpu-1 systemd[1]: Failed to start NVIDIA Persistence Daemon.\n")


def test_the_persistence_daemon_failing_on_a_node_without_a_driver_is_the_driver_not_loaded() -> None:
    for text in (PERSISTENCED_CONSOLE, PERSISTENCED_JOURNAL):
        assert top_pair(_host(_syslog(text), loaded=False)) == ("driver", "driver_not_loaded"), text


def test_the_persistence_daemon_failing_beside_a_loaded_driver_is_not_the_driver_not_loaded() -> None:
    # look-alike: with the module loaded, the daemon's own words say why (checks.persistenced)
    pair = top_pair(_host(_syslog(PERSISTENCED_CONSOLE), loaded=True))
    assert pair is None or pair[1] != "driver_not_loaded"
