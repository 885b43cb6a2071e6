"""A GPU device node the container runtime cannot find while it applies a container's device
specs ('failed to apply OCI options: lstat /dev/nvidiactl: no such file or directory') on a
node whose driver is loaded on the host is a path the device plugin's allocation handed the
kubelet: the plugin serving the node is the layer (HAMi's where it runs, Project-HAMi/HAMi#776),
not the driver. Where the driver is not known to be on the host the line keeps naming the driver."""

from __future__ import annotations

from gpunode.catalog import load_catalog
from gpunode.checks.named import spec_device_owner

LINE = ('failed to generate container "180e8893b52ae58994b7db777ee79513fbf6555e10d49cb686f94e8f88666074" '
        "spec: failed to apply OCI options: lstat /dev/nvidiactl: no such file or directory")


def test_a_missing_spec_device_on_a_host_driver_node_is_the_serving_plugins() -> None:
    catalog = load_catalog()
    assert spec_device_owner(catalog, ["hami-device-plugin"], True, LINE) == "hami-device-plugin"
    assert spec_device_owner(catalog, [], True, LINE) == "device-plugin"


def test_without_the_host_driver_or_in_other_words_it_names_no_plugin() -> None:
    catalog = load_catalog()
    assert spec_device_owner(catalog, ["hami-device-plugin"], False, LINE) is None
    for other in ("failed to apply OCI options: lstat /dev/nvidiactl: permission denied",
                  "open /dev/nvidiactl: no such file or directory",
                  "failed to apply OCI options: lstat /dev/fuse: no such file or directory"):
        assert spec_device_owner(catalog, ["hami-device-plugin"], True, other) is None, other
