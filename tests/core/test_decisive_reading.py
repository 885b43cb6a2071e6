"""How a decisive line is read: which part of an error chain decides its class, and which
catalogued causes a wrapper at the start of a chain may not claim. Lines are from public
reports (the source of each is named beside it)."""

from __future__ import annotations

import pytest

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
        ("md5sum: WARNING: 1 computed checksum did NOT matchNVIDIA-Linux-x86_64-396.37-diagnostic.run: FAILED",
         "error_file_state"),
        # andrewd18/df-lnp-installer#3 and AeliusSaionji/chocopkgs#81: the same in other tools' words
        ("sha1sum: WARNING: 1 computed checksum did NOT match", "error_file_state"),
        ("Error - hashes do not match. Actual value was 'A31DF6F4F07E78EF22FE3FFD5CDD00392635049BB68C54A7FAC116E81D2EA647'.",
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
    ],
)
def test_classes_of_lines_no_one_catalogued(line: str, cls: str) -> None:
    assert KB.class_of(line) == cls


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
