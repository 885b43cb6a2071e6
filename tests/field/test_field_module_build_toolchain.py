"""The driver's module build stopped by the build tree it compiles against: a header the
running kernel's tree should hold and does not (the compiler's "fatal error: <header>: No
such file or directory" from a file of that tree, kbuild's generated .mod.c, or a header every
configured tree generates; kbuild's "include/generated/autoconf.h or include/config/auto.conf
are missing"), and the kernel's compiler against the build's (the kernel's banner and ``gcc
--version`` with another major.minor, NVIDIA's conftest.sh cc_version_check). Lines as public
reports quote them: tbsdtv/linux_media#320, v4l2loopback/v4l2loopback#523,
zen-kernel/zen-kernel#305, void-linux/void-packages#14273 (headers); NVIDIA/gpu-operator#564
and NVIDIA/open-gpu-kernel-modules kernel-open/conftest.sh (compiler). Look-alikes: a header
the driver's own sources include that the kernel dropped, a build whose compilers agree, a
driver container that built and runs."""

from __future__ import annotations

from typing import Any

from case import Case, synthetic_case
from scoreboard import top_pair

_HEADERS, _GCC = "kernel_headers_missing", "gcc_mismatch"


def _driver(text: str, *, crashed: bool = True, kernel: str | None = None) -> Case:
    state: dict[str, Any] = {"kind": "pod-state", "component": "driver", "container": "nvidia-driver-ctr",
                             "state": "CrashLoopBackOff" if crashed else "Running",
                             "restarts": 5 if crashed else 0}
    log = {"kind": "log", "component": "driver", "container": "nvidia-driver-ctr", "previous": crashed,
           "text": text}
    cluster = {"gpu_node": {"kernel": kernel}} if kernel else None
    return synthetic_case("x-module-build", [state, log], healthy=not crashed, cluster=cluster)


_MAKE_END = ("compilation terminated.\n"
             "make[2]: *** [scripts/Makefile.build:243: "
             "/usr/src/nvidia-550.54.15/kernel/nvidia/nv.o] Error 1\n"
             "make: *** [Makefile:82: modules] Error 2\n")


def test_a_header_the_kernel_tree_includes_and_lacks_is_incomplete_headers() -> None:
    # the kernel's own kconfig.h including its generated config (tbsdtv/linux_media#320's form)
    kconfig = ("  CC [M]  /usr/src/nvidia-550.54.15/kernel/nvidia/nv.o\n"
               "In file included from <command-line>:\n"
               "././include/linux/kconfig.h:5:10: fatal error: generated/autoconf.h: "
               "No such file or directory\n"
               "    5 | #include <generated/autoconf.h>\n" + _MAKE_END)
    assert top_pair(_driver(kconfig)) == ("driver", _HEADERS)
    # clang's words for the same (emilyst/hid-nx-dkms#12)
    clang = ("././include/linux/kconfig.h:5:10: fatal error: 'generated/autoconf.h' file not found\n"
             + _MAKE_END)
    assert top_pair(_driver(clang)) == ("driver", _HEADERS)
    # the module's .mod.c that kbuild's modpost wrote, including a header the tree lacks
    mod_c = ("/usr/src/nvidia-550.54.15/kernel/nvidia.mod.c:10:10: fatal error: asm/orc_header.h: "
             "No such file or directory\n" + _MAKE_END)
    assert top_pair(_driver(mod_c)) == ("driver", _HEADERS)
    # an absolute path of the headers package's own tree
    tree = ("/usr/src/linux-headers-6.8.0-31-generic/include/linux/compiler_types.h:89:10: fatal error: "
            "asm/compiler.h: No such file or directory\n" + _MAKE_END)
    assert top_pair(_driver(tree)) == ("driver", _HEADERS)


def test_a_generated_header_missing_and_kbuild_s_stop_are_incomplete_headers() -> None:
    # zen-kernel/zen-kernel#305: the config header forced in on the command line
    forced = ("<command-line>: fatal error: /lib/modules/6.2.6-zen1-1-zen/build/include/linux/autoconf.h: "
              "No such file or directory\n" + _MAKE_END)
    assert top_pair(_driver(forced)) == ("driver", _HEADERS)
    # void-linux/void-packages#14273: kbuild's own stop for an unprepared tree
    kbuild = ("ERROR: Kernel configuration is invalid.\n"
              "         include/generated/autoconf.h or include/config/auto.conf are missing.\n"
              "         Run 'make oldconfig && make prepare' on kernel src to fix it.\n" + _MAKE_END)
    assert top_pair(_driver(kbuild)) == ("driver", _HEADERS)


def test_a_header_the_driver_s_own_sources_include_is_not_incomplete_headers() -> None:
    # an old driver's nv-linux.h including asm/kmap_types.h, which kernel 5.11 removed: the
    # driver's age, not the headers
    text = ("/usr/src/nvidia-450.80.02/kernel/common/inc/nv-linux.h:224:10: fatal error: asm/kmap_types.h: "
            "No such file or directory\n" + _MAKE_END)
    found = top_pair(_driver(text))
    assert found is not None and found[1] != _HEADERS


def test_a_healthy_build_that_compiled_its_mod_c_stays_healthy() -> None:
    text = ("Compiling NVIDIA driver kernel modules...\n"
            "  CC [M]  /usr/src/nvidia-550.54.15/kernel/nvidia.mod.o\n"
            "In file included from ./include/linux/module.h:12,\n"
            "  LD [M]  /usr/src/nvidia-550.54.15/kernel/nvidia.ko\n"
            "Loading NVIDIA driver kernel modules...\nDone, now waiting for signal\n")
    assert top_pair(_driver(text, crashed=False)) is None


_BANNER = ("Linux version 4.4.0-34-lowlatency (buildd@lgw01-20) (gcc version 5.3.1 20160413 "
           "(Ubuntu 5.3.1-14ubuntu2.1) ) #53-Ubuntu SMP PREEMPT Wed Jul 27 19:23:26 UTC 2016\n")
_NEW_BANNER = ("Linux version 5.15.0-1057-azure (buildd@lcy02-amd64-033) (gcc (Ubuntu 11.4.0-1ubuntu1~22.04) "
               "11.4.0, GNU ld (GNU Binutils for Ubuntu) 2.38) #65-Ubuntu SMP Tue Feb 6 19:52:39 UTC 2024\n")


def test_the_kernel_s_compiler_and_the_build_s_of_another_release_are_a_mismatch() -> None:
    # a kernel built by gcc 5.3, the build's gcc 5.4 (the minor differs, as conftest.sh reads it)
    text = ("cat /proc/version\n" + _BANNER
            + "gcc --version\ngcc (Ubuntu 5.4.0-6ubuntu1~16.04.1) 5.4.0 20160609\n")
    assert top_pair(_driver(text, kernel="4.4.0-34-lowlatency")) == ("driver", _GCC)
    # the banner's form since 5.8 and a RHEL-style compiler name
    rhel = _NEW_BANNER + "cc (GCC) 8.5.0 20210514 (Red Hat 8.5.0-4)\n"
    assert top_pair(_driver(rhel, kernel="5.15.0-1057-azure")) == ("driver", _GCC)


def test_compilers_of_one_release_or_another_kernel_s_banner_say_no_mismatch() -> None:
    same = _NEW_BANNER + "gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0\n"
    found = top_pair(_driver(same, kernel="5.15.0-1057-azure"))
    assert found is None or found[1] != _GCC
    # the banner of a kernel the node does not run is not the running kernel's compiler
    other = _BANNER + "gcc (Ubuntu 5.4.0-6ubuntu1~16.04.1) 5.4.0 20160609\n"
    found = top_pair(_driver(other, kernel="4.4.0-36-generic"))
    assert found is None or found[1] != _GCC
    # a driver container that built and runs, whatever it printed
    done = _BANNER + "gcc (Ubuntu 5.4.0-6ubuntu1~16.04.1) 5.4.0 20160609\nDone, now waiting for signal\n"
    assert top_pair(_driver(done, crashed=False, kernel="4.4.0-34-lowlatency")) is None


def test_the_check_reads_the_catalogue_s_installer_log_pattern() -> None:
    from gpunode.checks.module_build import TREE_HEADER_MISSING
    from gpunode.kb import load_kb
    patterns = {m.pattern for m in load_kb().get(_HEADERS).match if m.source in ("node_file", "text")}
    assert TREE_HEADER_MISSING in patterns
