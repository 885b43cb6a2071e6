"""The decisive line: what a component itself said when it failed, by general rules.

A catalogued signature knows one failure; most failures a user meets are not
catalogued. Every log format the stack writes marks its errors the same few ways
(logrus/zap ``level=error``, klog ``E``/``F`` prefixes, ``Error:``/``FATAL``/
``panic:``, shell ``failed``/``unable to``/``cannot``, HTTP 4xx/5xx, a non-zero exit),
so the line that ends a container can be found without knowing its wording: the
last error-level line, retries and noise skipped, a bare wrapper ("exit status 1")
giving way to the specific error just before it, and a line that says nothing by itself
("Encountered a failure.") read with the line of its run that says what was attempted
(``in_context``). The line is then put in a class
(knowledge base entries with ``decisive`` matches: not found, permission denied,
version mismatch, …) that carries its own explanation, fix and next steps.

Pure text functions: the checks and ``explain`` feed them lines.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from gpunode.relazy import lazy_compile

#: The longest line kept as the decisive one: a wrapped error chain puts its reason last,
#: so the class is read over all of it (evidence and titles show less).
MAX_LINE = 4000
#: Among the last errors, how far back a specific one may be preferred over a wrapper.
_LOOKBACK = 8

# Severity as the common log formats write it.
_LEVEL_KV = lazy_compile(r'\blevel="?(?P<level>[a-zA-Z]+)"?')
_LEVEL_JSON = lazy_compile(r'"(?:level|severity|lvl)"\s*:\s*"(?P<level>[a-zA-Z]+)"')
_KLOG = lazy_compile(r"^(?P<level>[IWEF])\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+\s+[^\]]{1,200}\]\s?")
_SAYS_ERROR = lazy_compile(r"(?:Error|ERROR|error|Fatal|FATAL|fatal|panic)\b:?")
#: An error a program quotes inside a line it logged at info level ("... with error: 'ERROR:
#: ...'"): the line reports a failure, whatever level it was given.
_QUOTES_ERROR = lazy_compile(r"\bwith error:? ['\"]?(?:ERROR|FATAL|Error)\b:")
#: A structured line that carries a non-empty error field (zap's "error"/"Error" key, logfmt's
#: err=/error=) reports a failure at whatever level it was logged (controller-runtime logs
#: "Couldn't create DaemonSet" at info with the API's refusal in its Error field).
#: Rust's tracing writes its field unquoted, as the error's Display or Debug form
#: ("error=InitialListFailed(Service(Closed))", "error=Connection refused (os error 111)").
#: A key is a word of its own: the tail of a hyphenated flag's name is no error field (the
#: flag dump Kubernetes' component-base prints at start, 'FLAG: --fail-on-init-error="true"',
#: Project-HAMi/HAMi#861, is the program's configuration, not a failure).
_ERROR_FIELD = lazy_compile(r'"(?:error|Error|err)"\s*:\s*"[^"\s]|(?<![\w-])err(?:or)?="[^"\s]|'
                            r'(?<![\w-])error=(?!<nil>|nil\b|none\b|None\b|false\b|0\b)[A-Za-z]')
_LOGRUS_TEXT = lazy_compile(r"^(?P<level>INFO|WARN|ERRO|FATA|PANI|DEBU|TRAC)\[[\d:-]{1,30}\]")
#: zap's console encoder (controller-runtime's default): time, level, logger, message, tab-separated.
#: A level below debug, which logr's V(n) maps to zap's -n, it prints as "LEVEL(-2)" (zapcore
#: Level.CapitalString): verbose detail (the SR-IOV config daemon's discovery,
#: k8snetworkplumbingwg/sriov-network-operator#859).
_ZAP_CONSOLE = lazy_compile(
    r"^\S{8,40}\t(?P<level>(?i:debug|info|warn|error|dpanic|panic|fatal)|LEVEL\(-\d{1,3}\))\t"
    r"(?:(?P<logger>[\w.-]{1,80})\t)?")
_VERBOSE_ZAP_LEVEL = "level(-"
#: Rust's tracing-subscriber fmt layer (Vector, kube-rs controllers): an RFC 3339 time, the
#: level padded to five, then the target and any spans, each ending in ': '
#: ("2023-03-29T17:28:32.024522Z  WARN vector::kubernetes::reflector: Watcher Stream ...").
_TRACING = lazy_compile(
    # Vector before 0.18 wrote its time as "Sep 02 03:01:41.493" (vectordotdev/vector#8999)
    r"^(?:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)|"
    r"[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d\.\d{3,9})\s+"
    r"(?P<level>TRACE|DEBUG|INFO|WARN|ERROR)\s+(?:[\w:]{1,200}(?:\{[^{}]{0,500}\})?:\s+){1,4}")
_WORD_LEVEL = lazy_compile(r"^\s*(?P<level>WARNING|Warning|WARN|NOTICE|Notice|INFO|Info|DEBUG|Debug):\s")
_BRACKET = lazy_compile(r"\[(?P<level>ERROR|FATAL|ERR|CRIT|CRITICAL|PANIC|WARN|WARNING|INFO|DEBUG)\]")
#: A C library's header that names itself, its level and where it logged from, in brackets:
#: HAMi-core's "[HAMI-core ERROR (pid:362 thread=140045668926464 context.c:114)]: ..."
#: (Project-HAMi/HAMi-core#63) and "[HAMi-core Warn(1062:140445645899264:utils.c:287)]: ..."
#: (Project-HAMi/HAMi#1219); "Msg" is its notice level.
_NAMED_LEVEL = lazy_compile(r"^\[[\w.-]{1,40} (?P<level>ERROR|FATAL|WARN|Warn|INFO|Info|DEBUG|Debug|Msg)"
                            r"\s?\([^()]{0,200}\)\]:")
#: Fluent Bit's header: its time in brackets, then its level in lowercase, padded to five
#: ("[2018/02/07 18:32:43] [error] [filter_kube] ...", "[ warn]", "[ info]"); a report may
#: paste the line without its time ("[error] [filter:kubernetes:kubernetes.0] ...").
_FLUENT_BIT = lazy_compile(r"^(?:\[\d{4}/\d\d/\d\d \d\d:\d\d:\d\d\]\s+)?"
                           r"\[\s?(?P<level>error|warn|info|debug|trace)\]\s")
_PREFIX_ERROR = lazy_compile(
    r"(?:^|[\s:>\]|])(?:Error|ERROR|error|FATAL|Fatal|fatal|panic|PANIC|fatal error|E)"
    r"(?:\s*\([^)]{0,40}\))?:\s|"
    r"^\s*(?:ERROR|FATAL|CRITICAL)\b|\bERR(?:OR)?\s*[:\]]|"
    # the level set off by dashes, as Python's logging formats put it ("%(asctime)s -
    # %(name)s - %(levelname)s - %(message)s": "... - ERROR - ...") and C libraries that print
    # "<function>: Error - <message>" (libspdm's "libspdm_check_crypto_backend: Error - libspdm
    # expects LKCA but found stubs!", aleph-im/aleph-vm#1271)
    r"(?:^|[\s:>\]|])(?:Error|ERROR|FATAL|Fatal|CRITICAL) - \S|"
    # a message that opens on the word and the step it failed in ("Error while creating shared
    # memory segment /dev/shm/nccl-X (size N)", NVIDIA/nccl-tests#166; gRPC's "Error while dialing")
    r"^\s*Error (?:while|when|during) \w+(?:ing|ion)\b|"
    # Docker's CLI relaying any error its daemon answered ("docker: Error response from daemon:
    # NetworkDriver.CreateNetwork: ...", moby client/errors.go; Mellanox/docker-sriov-plugin#15)
    r"^(?:docker: )?Error response from daemon: \S|"
    # the last line of a Python traceback: the exception's class and its message
    r"^(?:[a-z_][\w.]{0,80}\.)?[A-Z]\w{0,60}(?:Error|Exception): \S"
)
#: client-go's reflector logs a list or watch it could not make at warning level (the
#: "Failed to watch" error after it may be cut off): the controller sees none of those objects.
_REFLECTOR_FAILURE = lazy_compile(r"\breflector\.go:\d+\][^\n]{0,300}\bfailed to (?:list|watch) \*?[\w.]+: ")
_XID = lazy_compile(r"NVRM: Xid \(|XidCriticalError")
#: The resource manager's assertions and checks whose status says only that a call does not
#: apply here (NV_ERR_NOT_SUPPORTED) or is a warning by its own name (NV_WARN_*): working
#: drivers print them ("NVRM: nvCheckOkFailedNoLog: Check failed: Call not supported
#: [NV_ERR_NOT_SUPPORTED] (0x00000056) returned from ...", NVIDIA/nvtrust#54), so they are noise.
ROUTINE_RM_STATUS = lazy_compile(
    r"\b(?:Assertion|Check) failed: [^\[]{0,80}\[(?:NV_ERR_NOT_SUPPORTED|NV_WARN_\w+)\]")
#: The kernel module loader refusing a module built for another kernel: its vermagic check
#: ("nvidia: version magic '5.15.0-105-generic SMP mod_unload ' should be '5.15.0-106-generic
#: SMP mod_unload '") and its struct module size check (kernel/module), no error word in either.
_LOADER_REFUSAL = lazy_compile(
    r"\bversion magic '[^']{0,200}' should be '|\.gnu\.linkonce\.this_module section size must match")
#: A C tool's own error in the GNU form "program: file: message" (err(3), perror with the
#: file name): the tool names the file it failed on, then why ("gzip: <path>: not in gzip
#: format", "umount: /mnt: target is busy."). A ratio or count after the file is a report.
_C_TOOL_ERROR = lazy_compile(r"^[a-z][\w.+-]{0,30}: /[^\s:]{1,400}: (?![\d.]+%|OK\b)[A-Za-z]")
#: A program refusing the command it was called for, in its own name first ("<program>:
#: unknown command <name>"): a multi-call wrapper that dispatches on the name it is run under
#: and does not know that name (Talos's nvidia-container-toolkit extension wrapper asked to run
#: as nvidia-cdi-hook: "nvidia-container-runtime-wrapper: unknown command nvidia-cdi-hook",
#: TheBranchDriftCatalyst/talos-homelab docs/06-troubleshooting/nvidia-ebpf-workaround.md),
#: or a CLI a subcommand it lacks. No error word, but nothing was run.
_COMMAND_REFUSED = lazy_compile(r"^[a-z][\w.+-]{0,40}: unknown command \S")
#: A process that died by a signal or a runtime panic says so in these words.
_CRASH = lazy_compile(
    r"\bSIG(?:SEGV|ABRT|FPE|BUS|ILL)\b|[Ss]egmentation (?:fault|violation)|"
    r"^panic: |^fatal error: |"
    # a shell's words for a child a signal killed, with its core ("/run.sh: line
    # 5:  42 Aborted  (core dumped) nv-hostengine", "Floating point exception")
    r"\b(?:Aborted|Floating point exception|Bus error|Illegal instruction)\s+\(core dumped\)|"
    # Rust's panic ("thread 'main' panicked at src/main.rs:10:5:")
    r"^thread '[^']{0,100}' panicked at |"
    # the first frame of a native backtrace a crash handler prints (Fluent Bit's
    # "#0  0x563e3021d38e  in  cb_stdout_flush() at plugins/out_stdout/stdout.c:144",
    # gdb's "#0  0x00007f.. in raise () from /lib/..."): where the process died
    r"^\s*#0\s+0x[0-9a-f]{4,16}\s+in\s+\S|"
    # kubectl describe's exit code of a container a signal killed (128 + SIGILL 4,
    # SIGABRT 6, SIGBUS 7, SIGFPE 8, SIGSEGV 11); 137 (SIGKILL) is OOM or a kill
    r"^\s*Exit Code:\s+13[2456]\b|^\s*Exit Code:\s+139\b|"
    # the kernel's report of a process it killed for a bad memory access
    r"\bsegfault at [0-9a-f]{1,16} ip [0-9a-f]{1,16}\b|"
    # the C++ runtime's words for an exception no one caught (then abort)
    r"^terminate called after throwing an instance of |"
    # the kernel's own report of a BUG() it hit or a fault it could not handle, the first line
    # of its oops (include/asm-generic/bug.h "kernel BUG at %s:%u!", arch/x86/mm/fault.c
    # "BUG: unable to handle page fault for address", older "... kernel NULL pointer
    # dereference" / "... kernel paging request")
    r"\bkernel BUG at [\w./-]{1,200}:\d+!|\bBUG: unable to handle (?:page fault|kernel)\b")
#: GNU make's report of a recipe that failed ("make[1]: *** [Makefile:1910: <dir>] Error 2",
#: "make: *** [modules] Error 2"): the build stopped there, unless make was told to ignore it.
_MAKE_ERROR = lazy_compile(r"\*\*\* \[[^\]]{1,300}\] Error \d+\b(?! \(ignored\))")
_ERROR_WORDS = lazy_compile(
    r"\b(?:failed|failure|fails|unable to|cannot|can't|could not|couldn't|not found|"
    r"no such file|permission denied|denied|refused|forbidden|unauthorized|timed out|"
    r"timeout|invalid|incompatible|mismatch|unsupported|not supported|"
    r"exit (?:status|code) [1-9]\d*|exited with (?:code|status) [1-9]\d*|"
    r"returned (?:non-zero|[1-9]\d*)|out of memory|no space left|"
    r"SIGSEGV|SIGABRT|SIGBUS|segmentation (?:fault|violation)|core dumped|"
    # the kernel's and the kubelet's own words for a failure (its device count refusing a
    # container: "requested number of GPUs unavailable. Requested: 4, Available: 0")
    r"fallen off the bus|Unknown symbol|disagrees about version|is rejected|"
    r"requested number of (?:devices|GPUs) unavailable|"
    # nvidia.ko's probe took no GPU, so its init fails (ENODEV) and the module does not load
    r"No NVIDIA (?:GPUs?|devices?) (?:were )?(?:found|probed)|"
    # a parser's own word for input it could not read ("Malformed configmap contents")
    r"corrupted|malformed|OOMKilled|unhealthy|not healthy|KubeletNotReady|NotReady|"
    r"unbound variable|read-only file system|Unknown Error|"
    # the CUDA runtime's own texts for its device errors (cudaGetErrorString: 46
    # cudaErrorDevicesUnavailable, 3 cudaErrorInitializationError), whatever check prints them
    r"devices? (?:is|are) busy or unavailable|\binitialization error\b|"
    # a CUDA result named by its enum, the driver API's or the runtime's (cuda.h CUresult
    # CUDA_ERROR_*, cuda_runtime_api.h cudaError*), as the CUDA samples' checkCudaErrors()
    # prints it: 'Driver API error = 0003 "CUDA_ERROR_NOT_INITIALIZED" from file ...'
    # (NVIDIA/gpu-operator#32); success has its own names (CUDA_SUCCESS, cudaSuccess)
    r"\bCUDA_ERROR_[A-Z_]+\b|\bcudaError[A-Z]\w*|"
    # a C program that prints the errno of its failed call as a number ("Fail to open <file>:
    # errno=2"); errno 0 is no error
    r"errno[ =:]+[1-9]\d*|"
    r"not installable|(?:don.t|do not|does not|doesn.t) match|higher than|is not allowed|"
    # a container engine asked for a runtime it has none of (containerd's 'no runtime for
    # "nvidia" is configured', older dockerd's "Unknown runtime specified nvidia")
    r"in use by another|requires use of|no runtime for|unknown runtime\b|unknown option|no firmware|"
    r"not currently loaded|Insufficient \w+|flag provided but not defined|flag needs an argument|"
    # a setting's value the program does not know ("unknown GPU sharing strategy: X", "unknown
    # strategy: X"), or one that needs a feature gate left off
    r"unknown (?:[\w-]+ ){0,3}(?:strategy|mode|policy)\b|feature gate\W{0,3} is not enabled|"
    r"address already in use|"
    # a server without the API the client calls (gRPC's Unimplemented, the kubelet's "CRI v1
    # runtime API is not implemented for endpoint" from a containerd too old for it,
    # kubernetes/kubernetes#113625), and the kubelet's eviction message for a node under
    # pressure ("The node had condition: [DiskPressure].", pkg/kubelet/eviction)
    r"(?:API|method|service|RPC)\b[\w ().-]{0,40}\bis not implemented\b|code = Unimplemented\b|"
    r"The node had condition: \[\w*Pressure|"
    # QEMU refusing a device_add on a bus or of a device that takes no hotplug
    # (include/qapi/qmp/qerror.h QERR_BUS_NO_HOTPLUG, QERR_DEVICE_NO_HOTPLUG)
    r"does not support hotplugging|"
    # a runtime refusing a container path it was told to create where the host already has one
    # (CRI-O's "privileged container was configured with a device container path that already
    # exists on the host", cri-o internal/factory/container device.go)
    r"path that already exists on the host|"
    # an object or a part a step needs and did not find ready or present ("ClusterPolicy is not
    # ready, states not ready: [...]"; "The toleration is missing in the generated DaemonSet"),
    # and a scheduler that found no node for a pod ("no nodes with enough resources were found")
    r"(?:is|are) not ready\b|(?:is|are) missing\b|no nodes? with enough \w+|"
    # a program given an option it does not know (getopt's, cobra's, Go flag's and kingpin's
    # words: "unknown long flag '--web.config'", "unknown short flag '-c'")
    r"unrecognized (?:option|argument|flag)|unknown (?:shorthand |short |long )?flag|"
    # urfave/cli's answer to a subcommand the program does not have ("No help topic for
    # 'disable-device-node-modification'": a caller newer than the program it runs), and a
    # name no registry resolved (the CDI cache's "unresolvable CDI devices <kind>=<name>")
    r"no help topic for|unresolvable|"
    # a value refused for its form: a device request's identifier ("identifier is not a valid
    # UUID or index: %q", nvidia-container-toolkit pkg/nvcdi) and runc's systemd cgroup manager
    # handed a cgroupfs path ('expected cgroupsPath to be of format "slice:prefix:name"',
    # opencontainers/runc libcontainer/cgroups/systemd)
    r"is not a valid\b|expected [\w.-]+ to be of (?:the )?format\b|"
    # CUDA's and nvidia-smi's words for a node or container that shows no GPU, DNS's for a
    # name it cannot resolve, and a file that is not in the format its reader expects
    r"no CUDA-capable device|No devices were found(?=\.?\s*$)|no such host|not in (?:\w+ )?format|"
    # VFIO refusing a group whose devices are not all bound to vfio (the kernel's and QEMU's words)
    r"group \S{1,20} is not viable|"
    # the PCI core giving up on a device after a reset or power-up (drivers/pci/pci.c's
    # pci_dev_wait and pci_power_up), and VFIO refusing a group on a platform without interrupt
    # remapping (drivers/vfio/vfio_iommu_type1.c)
    r"not ready \d+ms after [^;\n]{1,40}; giving up|device inaccessible|No interrupt remapping support|"
    # nvidia.ko refusing to let a GPU go while a process holds it open (nv_pci_remove prints
    # "NVRM: Attempting to remove device <bdf> with non-zero usage count!" at NV_DBG_ERRORS and
    # waits): an unbind that hangs
    r"with non-zero usage count|"
    # a thing a program looked for and did not find (the CUDA images' entrypoint banner "The
    # NVIDIA Driver was not detected.": no libcuda.so.1 or no /dev/nvidiactl in the container)
    r"(?:was|were) not detected|"
    # a kernel oops' module list naming a module that was being unloaded ("(OE-)"): the oops
    # happened in the middle of its removal
    r"Modules linked in:.{0,4000}?\b\w+(?=\([A-Z]{0,8}-\))|"
    # a program that declines to go on, the kubelet evicting for a resource it is low on, and a
    # mount whose propagation a bind mount needs (the Docker daemon's and containerd's words)
    # an environment variable the program requires, unset ("CUDA_MPS_PIPE_DIRECTORY must be set
    # to start or to communicate with MPS control daemon", client-go's "KUBERNETES_SERVICE_HOST
    # and KUBERNETES_SERVICE_PORT must be defined")
    r"(?-i:\b[A-Z][A-Z0-9]*_[A-Z0-9_]+ (?:must be (?:set|defined)|is not set)\b)|"
    r"refus(?:ing|es) to|low on resource|not a (?:r?shared|r?slave)(?: or r?(?:shared|slave))? mount|"
    r"(?:didn.t|did not|don.t|do not) have enough|not enough|"
    # the C library's strerror texts, the dynamic loader's and the Kubernetes API's own words
    r"function not implemented|operation not permitted|no such device|device or resource busy|"
    r"input/output error|undefined symbol|can not|no matches for kind|"
    # ENOEXEC's text: exec(2) given a file that is no executable for this machine (a binary
    # of another architecture, a truncated or unflushed file)
    r"exec format error|"
    # the kubelet's event for an image it cannot pull; a numbered or named error condition
    r"back-off pulling image|with error \d+|(?:configuration|internal|port|fatal) error|broken|"
    # a reader's words for input it cannot parse (Prometheus' text format: "text format parsing
    # error in line 2: expected float as value", a shell's or a compiler's "syntax error")
    r"(?:pars(?:e|ing)|syntax) error|"
    # Go's "error <doing> X: …" messages, and NVML's return codes by name
    r"error (?:getting|creating|reading|writing|starting|running|loading|parsing|initiali[sz]ing|opening|"
    r"connecting|setting|building|fetching|listing|watching|updating|applying|executing|calling|validating|"
    r"checking|asserting|querying|registering|allocating|mounting)|"
    r"(?-i:ERROR_[A-Z]+(?:_[A-Z]+)*\b)|"
    r"HTTP(?:/\d(?:\.\d)?)? [45]\d\d|status(?: code)?:? [45]\d\d|[45]\d\d (?:Not Found|Forbidden|"
    r"Unauthorized|Bad Request|Internal Server Error|Service Unavailable|Bad Gateway))\b",
    re.IGNORECASE,
)
# Lines that carry an error word yet are not a failure: retries, progress, success. A word
# that is part of a dotted or hyphenated name (a flag, a file, a metric: node_exporter's
# "unknown long flag '--collector.netdev.ignored-devices'") names that thing, not the line's
# outcome. A deprecation is a notice where the line says something is or has been deprecated
# (pflag's "Flag --cgroup-driver has been deprecated, ..."), or the word ends a clause; the
# adjective before a noun names the thing an error is about ("failed to traverse deprecated
# plugin socket path", the kubelet's plugin watcher: kubernetes/kubernetes#74669,
# rook/rook#2568) and leaves the error the line's outcome (the pattern's last branch).
# A line that ends by calling itself "(non-fatal)" is the program's own notice that nothing
# failed ("NVRM: RmInitAdapter: Failed to load gsp_log_*.bin, no GSP-RM logs will be printed
# (non-fatal)", NVIDIA/open-gpu-kernel-modules discussion #490 and #564); PCIe AER's
# "Uncorrected (Non-Fatal) error received" names a kind of error mid-line and stays one.
_NOISE = lazy_compile(
    r"(?<![-.])\b(?:retry(?:ing)?|will retry|retrying in|try again|attempt \d+ ?(?:of|/) ?\d+|backing off|"
    r"waiting for|still waiting|ignoring|ignored|skipping|skipped|"
    r"succeeded|successfully|success(?:ful)?|no errors?|0 errors?|errors?=0|"
    r"err(?:or)?=<nil>|error=\"\"|without errors?|if it fails|on failure|"
    r"failed=0|failures?: 0|not found, using|not found; using|falling back)\b(?![-.]\w)|"
    r"\((?:non-?fatal|harmless)\)\s*\.?$|"
    r"(?<![-.])\b(?:(?:is|are|was|were|be|been|being|now)\s+deprecated\b|deprecat(?:ion|ing)\b|"
    r"deprecated(?![-.]\w)(?=\s*(?:$|[,:;.!)\]]|(?:in|since|and|as of|for removal|please|use)\b)))",
    re.IGNORECASE,
)
#: The C library's text for errno 0 in the errno slot of an error message ("<what>: Success"):
#: a program that printed its failure with perror/strerror after errno was reset, or a shell
#: whose exec failed ("/bin/nvidia-docker: line 34: /bin/docker: Success" after the same
#: line's "Permission denied"). It names the errno, not an outcome, so it is no success.
_ERRNO_ZERO = lazy_compile(r": Success\b")
#: Advice to the reader that an error message carries ("please apply your changes to the
#: latest version and try again", the API server's conflict): the program is not retrying.
_ADVICE = lazy_compile(r"(?i:\bplease\b[^;.]{0,120}?\btry again\b)")
#: A wait that ended in failure is the error, not a progress line ("waiting for" is noise);
#: so is a success denied ("did not terminate successfully": containerd's go-runc on a runtime
#: binary that exited non-zero, "was not successful", "unsuccessful"); so is a wait that Go's
#: error chain ends with the other end's pipe closed ("cannot read client sync file: waiting
#: for sandbox to start: EOF", runsc: the sandbox died while it booted, google/gvisor#11328).
_FAILED_WAIT = lazy_compile(
    r"(?i:\b(?:error|failed|failure|timed out|timeout|gave up) (?:while )?waiting for|"
    r"\b(?:not|never)(?: \w+){0,2} success(?:ful(?:ly)?)?\b|\bunsuccessful)"
    r"|\bwaiting for [^:\n]{1,60}: (?:unexpected )?EOF\b")
_NOT_ERROR_LEVELS = frozenset(
    {"info", "debug", "trace", "notice", "i", "warning", "warn", "w", "debu", "trac", "msg"})
#: The levels a program keeps for its own detail, off unless asked for: what it logs there,
#: even an error field, is a step it handled, never its failure (nvidia_gpu_exporter's
#: ``level=debug error="could not parse number from value: ..."`` for every text field of
#: nvidia-smi's CSV, which it skips while exporting the numeric ones: the maintainer's answer
#: in utkuozdemir/nvidia_gpu_exporter#115).
_DETAIL_LEVELS = frozenset({"debug", "trace", "debu", "trac"})
_ERROR_LEVELS = frozenset({
    "error", "err", "fatal", "panic", "critical", "crit", "e", "f", "emerg", "alert", "erro", "fata", "pani",
    "dpanic"})
# A stack frame, a shell trace or a banner says nothing by itself.
_FRAME = lazy_compile(r"^\s*(?:at |goroutine \d+|/[\w./-]+\.go:\d+|\S+\.go:\d+ \+0x|\+ |\t|File \")")
# Wrappers: a failure line that only says something failed, not what.
_WRAPPER = lazy_compile(
    r"^(?:error:?\s*)?(?:exit status \d+|command failed|failed to run[^:]*|error running[^:]*|"
    r"Error: exit status \d+|.{0,60}exited with (?:code|status) \d+\.?|"
    r"[\w .-]{0,60} failed(?: with exit code \d+)?\.?|\w+ failed, exiting\.?|exiting\.?|"
    # a start script naming the command it ran and its exit code (nvidia-fabricmanager-start.sh)
    r"\"[^\"]{1,200}\" failed!? ?[Ee]xit code:? \d+\.?)$",
    re.IGNORECASE,
)
#: logrus's quoted message; a line cut before its closing quote (a runtime splits lines longer
#: than its max_container_log_line_size, a report pastes part of one) keeps what it has.
_MSG_KV = lazy_compile(r'\bmsg="(?P<msg>(?:[^"\\]|\\.){0,2000})(?:"|\\?$)')
_ERR_KV = lazy_compile(r'\berr(?:or)?="(?P<err>(?:[^"\\]|\\.){0,2000})"')
#: Where a line starts quoting another program's output: runc relays an OCI hook's stdout and
#: stderr into its error chain ("error running hook #1: error running hook: exit status 1,
#: stdout: , stderr: time=... level=info msg=\"Symlinking ...\" time=... level=error msg=..."),
#: NVIDIA/nvidia-container-toolkit#795), so a ``msg`` key after it is the hook's first line,
#: an info line as often as not, and not what the failed start says.
_RELAYED_OUTPUT = lazy_compile(r"\b(?:stdout|stderr): ")
_TIMESTAMP = lazy_compile(
    r"^(?:\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\s+|"
    r"[A-Z][a-z]{2} +\d+ \d\d:\d\d:\d\d(?: \S+ \S+?:)?\s+|\[\s*\d+\.\d+\]\s+)"
)


@dataclass(frozen=True)
class Decisive:
    """The line that decides a failure: where it is (1-based) and what it says."""

    line_no: int
    line: str
    #: How sure: 2 an explicit error level or prefix, 1 an error word only.
    strength: int
    #: Where the line says nothing by itself ("Encountered a failure."), the line of the same
    #: run before it that says what was attempted or what went wrong (``in_context``), and
    #: its number; "" and 0 where there is none.
    context: str = ""
    context_no: int = 0

    @property
    def message(self) -> str:
        """The line as a person reads it: without timestamp and log-format framing; for a
        line that says nothing by itself, what its context line says failed."""
        if self.context:
            return attempt_failed(message_of(self.context))
        return message_of(self.line)


#: A journal or syslog line's prefix: time, host and unit ("Dec 05 10:01:02 gpu-wk-01 kubelet[812]: ").
_JOURNAL = lazy_compile(
    r"^(?:[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d|"
    r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?)"
    r" \S+ [\w.@/-]{1,60}(?:\[\d+\])?: "
)


def without_prefix(line: str) -> str:
    """The line as its program wrote it, without a journal's time, host and unit."""
    found = _JOURNAL.match(line)
    return line[found.end():] if found is not None else line


#: A daemon's word on the service manager's readiness protocol (systemd's Type=notify,
#: sd_notify and its NOTIFY_SOCKET): go-systemd's SdNotify returns (false, nil) where
#: NOTIFY_SOCKET is unset, which is every process not started as a Type=notify unit, a
#: container's first of all. tkestack/gpu-manager logs "Unable to set Type=notify in systemd
#: service file?" at error level then (pkg/server/server.go; tkestack/gpu-manager#40: the
#: line stays in a working plugin pod's output). A unit that really waits for the message
#: fails in systemd's own words (the start timing out), so the daemon's line is noise.
_SERVICE_NOTIFY = lazy_compile(r"\bType=notify\b|\b[Ss][Dd]_?[Nn]otify\b|\bNOTIFY_SOCKET\b")


def severity(line: str) -> int:
    """2 for an explicit error level or prefix, 1 for an error word, 0 for none or noise.

    An explicit non-error level (info, warning, debug) is 0 whatever the words say:
    the program itself judged the line not to be an error; at info or warning a quoted
    error or error field is 1, at debug or trace (``_DETAIL_LEVELS``) nothing is. A daemon's
    note on notifying the service manager (``_SERVICE_NOTIFY``) is 0 at any level."""
    line = without_prefix(line[:20_000])
    if ("<nil>" in line and _nil_only(message_of(line))) or _SERVICE_NOTIFY.search(line):
        return 0
    level = _level(line)
    if level is not None:
        if level in _ERROR_LEVELS or (level == "w" and _REFLECTOR_FAILURE.search(line)):
            return 2
        if level in _NOT_ERROR_LEVELS:
            # a program that logs its fatal error at info level still says "Error:" first,
            # or quotes the error it got; at a detail level nothing it says is its failure
            said = message_of(line)
            quoted = level not in _DETAIL_LEVELS and (
                _SAYS_ERROR.match(said) or _QUOTES_ERROR.search(said) or _ERROR_FIELD.search(line))
            return 1 if quoted else 0
    noisy = _NOISE.search(_success_words(line)) and not _FAILED_WAIT.search(line)
    if _FRAME.match(line) or noisy or _XID.search(line) or ROUTINE_RM_STATUS.search(line):
        return 0  # an Xid is judged by the Xid catalog (application Xids are benign)
    if _PREFIX_ERROR.search(line) or _CRASH.search(line) or _MAKE_ERROR.search(line):
        return 2
    # a structured line with no level whose error field holds a value reports that error
    worded = (_ERROR_WORDS.search(line) or _ERROR_FIELD.search(line) or _C_TOOL_ERROR.match(line)
              or _LOADER_REFUSAL.search(line) or _COMMAND_REFUSED.match(line))
    return 1 if worded is not None else 0


#: Go's text for a nil error where a message prints its error last ("device-plugin server stopped
#: serving: <nil>", "err: <nil>"): the call returned no error.
_NIL_TAIL = lazy_compile(r"(?:\b(?:err|error)\s*[:=]\s*|:\s*)<nil>\s*$")


def _nil_only(message: str) -> bool:
    """A message whose error is Go's nil and whose own words say nothing failed: a program
    that logs the return of a call it ended on purpose at error level (GKE's GPU device plugin
    stopping its gRPC server to register again after the kubelet recreated its socket,
    GoogleCloudPlatform/container-engine-accelerators#403). "failed to X: <nil>" still fails."""
    head = _NIL_TAIL.sub("", message)
    return head != message and _ERROR_WORDS.search(head) is None


def _success_words(line: str) -> str:
    """The line without what only looks like a success or a retry: advice to the reader
    ("please ... try again") and the errno slot's "Success" (errno 0). Noise keys on the
    line's own outcome, not on a word that names an errno."""
    line = _ADVICE.sub("", line)
    return _ERRNO_ZERO.sub("", line) if ": Success" in line else line


#: A line addressed to the reader rather than reporting what happened: the hints a program
#: prints after its error ("If this is a GPU node, did you set the docker default runtime to
#: `nvidia`?", "You can check the prerequisites at: <url>", docker's "See 'docker run --help'.").
_ADVICE_LINE = lazy_compile(
    # Go's standard logger's time prefix, which message_of keeps
    r"^(?:\d{4}/\d\d/\d\d \d\d:\d\d:\d\d(?:\.\d+)?\s+)?"
    r"(?:If\b[^.]{0,200}?\byou\b|You (?:can|could|may|might|should|need|must)\b|Please\b|See\b|"
    r"Refer to\b|For (?:more|further) (?:information|details)\b|Hint\b|Make sure\b|Did you\b)",
    re.IGNORECASE)


def is_advice(line: str) -> bool:
    """Whether the line only advises the reader (a hint after an error), saying nothing of
    what the program did: the error it follows is still the program's last word."""
    return _ADVICE_LINE.match(message_of(line)) is not None


def reports_xid(line: str) -> bool:
    """Whether the line reports an Xid: the Xid catalog judges it (application Xids are
    benign), not the words around it."""
    return _XID.search(line) is not None


#: A line that opens on its own error ("Error: failed to create task for container: ... error
#: running hook #1: ... stderr: time=... level=info msg=...", the kubelet relaying runc relaying an
#: OCI hook's log, NVIDIA/nvidia-container-toolkit#795; "Error response from daemon: ..."): a
#: level key found further on belongs to the relayed program's line, whose info level does not
#: make the outer failure an info line.
_OPENS_ON_ERROR = lazy_compile(
    r"(?:[\w.-]{1,40}: )?(?:Error|ERROR|error|FATAL|Fatal|fatal)(?: response from daemon)?: \S")


def _level(line: str) -> str | None:
    for pattern in (_KLOG, _LOGRUS_TEXT, _ZAP_CONSOLE, _WORD_LEVEL, _FLUENT_BIT, _TRACING, _NAMED_LEVEL):
        found = pattern.match(line)
        if found is not None:
            level: str = found["level"].lower()
            return "debug" if level.startswith(_VERBOSE_ZAP_LEVEL) else level
    if _OPENS_ON_ERROR.match(line):
        return None  # a level further on is a relayed program's line, not this one's
    for pattern in (_LEVEL_JSON, _LEVEL_KV, _BRACKET):
        found = pattern.search(line)
        if found is not None:
            return found["level"].lower()
    return None


def decisive_line(lines: Sequence[str], classify: Classifier | None = None) -> Decisive | None:
    """The line that ends this text as a failure, or None when no line reads as an error.

    The last explicit error (else the last line with an error word) counts; noise and
    retries are skipped. Among the last few errors a more telling one may stand before
    it: a line that holds the last one's message and says more (the error logged before
    the fatal that repeats it), one that a ``classify`` puts in a class where the last
    one falls in none, or any specific one where the last is a bare wrapper ("exit
    status 1")."""
    strong: list[Decisive] = []
    weak: list[Decisive] = []
    for index, raw in enumerate(lines):
        line = raw.strip()
        if not line:
            continue
        level = severity(line)
        if level == 2:
            strong.append(Decisive(index + 1, line[:MAX_LINE], 2))
        elif level == 1:
            weak.append(Decisive(index + 1, line[:MAX_LINE], 1))
    candidates = strong or weak
    if not candidates:
        return None
    found = _most_telling(candidates[-_LOOKBACK:], classify)
    return in_context(lines, found, classify) if classify is not None else found


#: A count of zero beside a failure word ("0 Failed" in describe's "Pods Status: 16 Running /
#: 0 Waiting / 0 Succeeded / 0 Failed", "errors: 0"): the tally of a healthy object.
_ZERO_COUNT = lazy_compile(
    r"(?i:\b0 (?:failed|failures?|errors?)\b|\b(?:failed|failures?|errors?)\s*[:=]\s*0\b)")


def lenient_line(lines: Sequence[str]) -> Decisive | None:
    """The last line whose words say something failed, whatever level its program gave it
    and though it retries ("WARN failed to validate the driver, retrying"): what ``explain``
    quotes from a pasted text in which no line reads as an error (``decisive_line``), so
    the text is never answered with silence. Not for judging a component: a healthy one
    logs such warnings for ever."""
    for index in range(len(lines) - 1, -1, -1):
        line = lines[index].strip()
        if (line and not _FRAME.match(line) and not ROUTINE_RM_STATUS.search(line)
                and _ERROR_WORDS.search(_ZERO_COUNT.sub(" ", message_of(line)))):
            return Decisive(index + 1, line[:MAX_LINE], 1)
    return None


#: The audit record of a program killed by a signal, ``exe=`` the program (checks/crashes.py
#: names its component from it; a signal of 0 is seccomp's denied call, not a crash).
AUDIT_ABEND = (r"(?:\btype=1701 audit\([^)]*\):|\bANOM_ABEND )"
               r".*?\bexe=\\?\"?(?P<exe>[^\s\"\\]+)\\?\"?\s+sig=[1-9]")
#: gVisor's nvproxy answering a call it does not implement (checks/runsc_log.py reads it too).
NVPROXY_UNKNOWN_CALL = (r"\bnvproxy: unknown "
                        r"(?:control command|ioctl|allocation class|frontend ioctl|uvm ioctl)\b")
#: Lines that state a failure by their form, not by an error word, so that neither
#: ``severity`` nor ``lenient_line`` reads them (nor should: a diagnosis weighs them by its own
#: checks). Only ``explain`` quotes them, where a pasted text has no line that reads as an error:
#: an IOMMU's fault event on a device, AMD-Vi's and Intel VT-d's ("nvidia 0000:07:00.0: AMD-Vi:
#: Event logged [IO_PAGE_FAULT domain=0x0003 ...]", "DMAR: [DMA Read NO_PASID] Request device
#: [06:00.0] fault addr ..."): the device's DMA was refused by the IOMMU. A device plugin's
#: enumeration that found none ("No devices found. Waiting indefinitely.", "Warning: no Rdma
#: Devices were found for resource X"): the plugin has nothing to advertise, whatever level it
#: logged that at (a rescan that found no *new* device is no such statement, nor a query's
#: filter that matched none: nvidia-smi's "No devices were found with pending page retirements").
#: The dynamic
#: loader's fatal line ("<program>: error while loading shared libraries: <library>: <why>"):
#: the program never started (exit 127), whatever the reason after the library's name says
#: ("wrong ELF class: ELFCLASS64") or where a paste cuts it. A JVM exception named by its
#: fully qualified class, then its message ("org.openucx.jucx.UcxException: No resources are
#: available to initiate the operation", "ai.rapids.cudf.CudfException: ..."): a thrown failure,
#: though the line that reports it is a warning. The audit subsystem's record of a program killed
#: by a signal ("audit: type=1701 ...: ... exe=\"/usr/bin/nvidia-container-cli\" sig=11", ANOM_ABEND;
#: checks/crashes.py reads it for the diagnosis; a signal of 0 is seccomp's denied call). gVisor's
#: nvproxy answering a call it does not implement ("nvproxy: unknown control command 0x20803801",
#: a W-level line of runsc's boot log, checks/runsc_log.py): the sandboxed workload sees no GPU.
#: A library's words that it found no driver, and FFmpeg's minimum NVENC driver (below).
_STATED_FAILURE = lazy_compile(
    r"(?:^|[\s:(])(?:[a-z_][a-z0-9_]*\.){2,}[A-Z]\w*Exception: \S|"
    r"\berror while loading shared libraries: \S|"
    r"(?i:\bno (?!new\b|more\b|additional\b|other\b|changed?\b)(?:\w+ ){0,2}devices? "
    r"(?:were |was )?found\b(?!\s+with\b))|"
    r"\bAMD-Vi: Event logged \[\s*IO_PAGE_FAULT\b|(?:^|\s)IO_PAGE_FAULT device=|"
    r"\bDMAR: \[DMA (?:Read|Write)\b[^\]]{0,40}\] Request device \[[^\]]{1,40}\][^\n]{0,80}\bfault addr\b|"
    # the kubelet's refusal of a container whose securityContext asks for a non-root user that
    # the image's own user (root) contradicts (verifyRunAsNonRoot, a CreateContainerConfigError;
    # the waiting reason stays the diagnosis' reading); a YAML line that sets runAsNonRoot does not
    r"\bcontainer has runAsNonRoot and image will run as root\b|"
    # a library that looked for a driver and found none, in its own words: PyTorch's "Found no
    # NVIDIA driver on your system" (c10/cuda, raised or warned at CUDA initialization), the
    # Vulkan loader's "vkCreateInstance: Found no drivers!" (logged at its error level before
    # VK_ERROR_INCOMPATIBLE_DRIVER); a program that found no errors or no updates says nothing failed
    r"(?i:\bfound no (?:\w+ ){0,2}(?:drivers?|GPUs?|platforms?)\b)|"
    # FFmpeg's NVENC loader stating the driver release it needs ("The minimum required Nvidia
    # driver for nvenc is 520.56.06 or newer", libavcodec/nvenc.c, at its error level after the
    # driver's NVENC could not be used)
    r"(?i:\bminimum required (?:\w+ ){0,3}driver\b.{0,60}\bor (?:newer|later)\b)|"
    + AUDIT_ABEND + "|" + NVPROXY_UNKNOWN_CALL)


#: apt's report of a dependency it cannot meet, one package pinning another to a version other
#: than the one to be installed ("nvidia-docker2 : Depends: docker-ce (= 5:18.09.0~3-0~ubuntu-xenial)
#: but 5:18.09.1~3-0~ubuntu-xenial is to be installed"): the two versions disagree; the "E:" line
#: after it only says that apt gave up.
_UNMET_DEPENDENCY = lazy_compile(
    r"^\S{1,200} ?: (?:Pre-?)?Depends: \S{1,200} \([<>=]{1,2} [^)\s]{1,100}\) "
    r"but \S{1,100} is to be installed\b")
#: Go's and the C library's canonical texts for a wait or a connection that failed, which hold
#: no error word: context.DeadlineExceeded's "context deadline exceeded", strerror's ECONNRESET
#: "connection reset by peer", EHOSTUNREACH "no route to host", ENETUNREACH "network is
#: unreachable". The whole message, or the end of a Go error chain ("analyze disk: context
#: deadline exceeded", "e2e_test.go:305: context deadline exceeded", "next reader: read tcp
#: a->b: read: connection reset by peer"), it is the error a program printed; inside a line
#: that goes on, it is a word of that line.
_CANONICAL_ERROR = lazy_compile(
    r"(?:^|: )(?i:context deadline exceeded|connection reset by peer|no route to host|"
    r"network is unreachable)[\s.]*$")
#: The levels at which a program says a line is no failure of its own (a warning still is one).
_QUIET_LEVELS = _NOT_ERROR_LEVELS - {"warning", "warn", "w"}


def _ends_on_canonical_error(line: str) -> bool:
    """Whether the line's message is, or ends in, a canonical error text (``_CANONICAL_ERROR``)
    that its program did not log at info or debug level nor retries: severity's own rules,
    under which a retry is noise."""
    plain = without_prefix(line)
    if not _CANONICAL_ERROR.search(message_of(plain)) or _NOISE.search(plain):
        return False
    return _level(plain) not in _QUIET_LEVELS


#: A container's waiting reason, and the catalogued cause it names: the kubelet's own words for
#: a pull it gave up on, a container that keeps exiting, one it could not create or start.
_WAITING_CLASS = {
    **dict.fromkeys(("ImagePullBackOff", "ErrImagePull", "ErrImageNeverPull", "InvalidImageName"),
                    "image_pull_failed"),
    "CrashLoopBackOff": "crash_loop",
    **dict.fromkeys(("CreateContainerConfigError", "CreateContainerError", "RunContainerError"),
                    "container_create_failed"),
}
_REASON = r"(?:Init:)?(?P<reason>" + "|".join(_WAITING_CLASS) + ")"
#: The reason as kubectl prints it: the whole line, or ``get pods``' STATUS column after NAME
#: (NAMESPACE first with ``-A``, ``pod/`` before it from ``get all``) and READY (an init
#: container's with "Init:"). Only there: inside a sentence or an event the line's own words
#: decide, and a row Running or Completed is no failure.
_WAITING_ALONE = lazy_compile(r"^\s*" + _REASON + r"\s*$")
_WAITING_ROW = lazy_compile(r"^\s*(?:[a-z0-9][-a-z0-9.]{0,252}\s+)?(?:pod/)?[a-z0-9][-a-z0-9.]{0,252}\s+"
                            r"\d+/\d+\s+" + _REASON + r"(?:\s|$)")


def _waiting_reason(line: str) -> str | None:
    """The waiting reason the line is, or shows in kubectl's STATUS column; None where not."""
    found = _WAITING_ALONE.match(line) or _WAITING_ROW.match(line)
    return None if found is None else found["reason"]


def stated_class(line: str) -> str | None:
    """The catalogued cause a stated line names by its form alone (a waiting reason), None
    where its words are to be read for their class."""
    reason = _waiting_reason(line)
    return None if reason is None else _WAITING_CLASS[reason]


def unmet_dependency(line: str) -> bool:
    """apt's record of a dependency it cannot meet (``_UNMET_DEPENDENCY``): no error word, and
    no severity, but a failure by its form; a host journal's reader takes it as one."""
    return "Depends: " in line and _UNMET_DEPENDENCY.match(without_prefix(line).strip()) is not None


def stated_line(lines: Sequence[str]) -> Decisive | None:
    """The last line that states a failure by its form alone (``_STATED_FAILURE``, a canonical
    error text, a waiting reason, an unmet dependency): what ``explain`` quotes where no line
    carries an error word, rather than silence."""
    for index in range(len(lines) - 1, -1, -1):
        line = lines[index].strip()
        if line and (_STATED_FAILURE.search(line) or _ends_on_canonical_error(line)
                     or _waiting_reason(line) is not None or _UNMET_DEPENDENCY.match(line)):
            return Decisive(index + 1, line[:MAX_LINE], 1)
    return None


#: Puts a message in a class (a knowledge-base code), or None where it fits none.
Classifier = Callable[[str], "str | None"]


def last_words(lines: Sequence[str], classify: Classifier) -> Decisive | None:
    """The last line a program wrote before it ended, where no error word or level marks
    it but its words fall in a class ("host engine is running as non-root", "x509:
    certificate signed by unknown authority"): the words it ended on say why. For a
    container that ended, whose text ``decisive_line`` found no error in. A line its
    program logged at a non-error level, a retry, a stack frame, an Xid or a hint to the
    reader says nothing of the end; a line in no class (a banner, progress) is no cause."""
    for index in range(len(lines) - 1, -1, -1):
        line = lines[index].strip()
        if not line or is_advice(line):
            continue
        plain = without_prefix(line)
        if _level(plain) in _NOT_ERROR_LEVELS or _FRAME.match(plain) or _NOISE.search(plain) \
                or _XID.search(plain):
            return None
        return Decisive(index + 1, line[:MAX_LINE], 1) if classify(message_of(line)) else None
    return None


#: A program that died of its own bug: Go's runtime panics and fatal errors, a signal.
_OWN_BUG = lazy_compile(
    r"^(?:panic: runtime error: |fatal error: )|\bSIGSEGV\b|segmentation (?:fault|violation)")


#: A wait that ran out ("failed to wait for X caches to sync: timed out waiting for cache to be
#: synced for Kind *v1alpha1.NVIDIADriver"): it says only that what it awaited never came; the
#: error logged before it says why (an API or CRD not found, a list forbidden, a peer refused:
#: apecloud/kubeblocks#5837, kluctl/template-controller#19, NVIDIA/gpu-operator#602).
_WAIT_EXPIRED = lazy_compile(r"(?i:\b(?:timed out|timeout) waiting for\b|\bfailed to wait for\b)")


def _most_telling(recent: list[Decisive], classify: Classifier | None) -> Decisive:
    last = recent[-1]
    said = last.message
    earlier = list(reversed(recent[:-1]))
    for before in earlier:  # the same error said with more context just before
        if said and said in before.message and len(before.message) > len(said):
            return before
    if _OWN_BUG.search(said):  # an error logged before it was handled; the crash ended the program
        return last
    wrapper = is_wrapper(said)
    if classify is not None and (classify(said) is None or _WAIT_EXPIRED.search(said)):
        for before in earlier:  # what the last one does not say: why it failed, why the wait ran out
            if classify(before.message) is not None and not is_wrapper(before.message) \
                    and not _WAIT_EXPIRED.search(before.message):
                return before
    if wrapper:
        for before in earlier:
            if not is_wrapper(before.message):
                return before
    return last


#: A failure line whose words carry nothing of what failed or why: dcgm-exporter's
#: "Encountered a failure." after "Attempting to connect to remote hostengine at ..."
#: (NVIDIA/dcgm-exporter#536), "FATAL: error", "an error occurred", "see log for details".
_CONTENT_FREE = lazy_compile(
    r"(?i:^(?:(?:error|fatal|critical|panic)\s*:?\s*)?(?:"
    r"encountered (?:a|an) (?:failure|error)|an? (?:unexpected |unknown |fatal )?error (?:has )?occurred|"
    r"errors?|failure|failed|fatal|stack ?trace|something went wrong|"
    r"see (?:the )?logs? (?:above |below )?for (?:more )?(?:details|information)|"
    r"exit(?:ed with)? (?:status|code) \d+|aborting|exiting)\W{0,3}$)")
#: How many lines before a content-free one may hold what it failed at, and how far apart in
#: time (seconds) they may stand to be one run (a connect that timed out, a command's exit).
_CONTEXT_LINES = 3
_BURST_S = 30
#: A line's time of day, as the common formats write it (RFC 3339, syslog, klog, logrus).
_CLOCK = lazy_compile(r"^.{0,40}?(?:\d{4}-\d\d-\d\d[T ]|[A-Z][a-z]{2} [ \d]\d |^[IWEF]\d{4} )"
                      r"(?P<h>\d\d):(?P<m>\d\d):(?P<s>\d\d)")
#: A line that announces an attempt ("Attempting to connect to X", "Trying to load Y"): with a
#: content-free failure right after it, it is that attempt that failed.
_ATTEMPT = lazy_compile(r"^(?:Attempting|Trying|Going|About) to (?=\w)", re.IGNORECASE)


def says_nothing(message: str) -> bool:
    """Whether a failure message only says that something failed, not what or why."""
    message = _LOGRUS_TEXT.sub("", message.strip(), count=1).strip()
    return is_wrapper(message) or _CONTENT_FREE.match(message) is not None


def attempt_failed(message: str) -> str:
    """An attempt's announcement read as its failure ("Attempting to connect to X" -> "Failed
    to connect to X"): what a content-free failure right after it means; other words as is."""
    return _ATTEMPT.sub("Failed to ", message, count=1)


def _clock(line: str) -> int | None:
    """The line's time of day in seconds, None where it shows none."""
    found = _CLOCK.match(without_prefix(line)) or _CLOCK.match(line)
    return None if found is None else int(found["h"]) * 3600 + int(found["m"]) * 60 + int(found["s"])


def _same_burst(line: str, stamp: int | None) -> bool:
    """Whether ``line`` was written within ``_BURST_S`` before ``stamp`` (unknown: yes)."""
    when = _clock(line)
    return stamp is None or when is None or (stamp - when) % 86400 <= _BURST_S


def in_context(lines: Sequence[str], found: Decisive, classify: Classifier) -> Decisive:
    """``found`` read with the line before it where it says nothing by itself and carries no
    class: the last error is often content-free ("Encountered a failure.", "Error: exit
    status 1") while a line of the same run just before it says what was attempted and what
    went wrong. Up to ``_CONTEXT_LINES`` lines back within one burst of time, noise, frames
    and hints skipped; the nearest whose words (an attempt read as failed) fall in a class
    gives the class. None does: ``found`` as it is. The line's severity is not changed, so
    a component is failed or not as before; only its cause is read."""
    if found.context or not says_nothing(found.message) or classify(found.message) is not None:
        return found
    stamp, taken = _clock(found.line), 0
    for index in range(min(found.line_no - 1, len(lines)) - 1, -1, -1):
        line = lines[index].strip()[:MAX_LINE]
        plain = without_prefix(line)
        if not line or _FRAME.match(plain) or is_advice(line) or _NOISE.search(plain):
            continue
        taken += 1
        if taken > _CONTEXT_LINES or not _same_burst(line, stamp):
            break
        said = message_of(line)
        if not says_nothing(said) and classify(attempt_failed(said)) is not None:
            return replace(found, context=line, context_no=index + 1)
    return found


def is_wrapper(message: str) -> bool:
    """Whether the message only says that something failed (exit status 1), not why."""
    return bool(_WRAPPER.match(message.strip()))


#: Messages longer than this are shown from their innermost errors (a Go error chain).
_SHOWN = 200


def shown(message: str) -> str:
    """A message short enough for a title: a long wrapped error chain ("a: b: c: d") from
    the innermost errors it ends with, which say why; the wrappers before only say where."""
    if len(message) <= _SHOWN:
        return message
    parts = message.split(": ")
    tail = parts[-1]
    for part in reversed(parts[:-1]):
        if len(part) + len(tail) + 2 > _SHOWN:
            break
        tail = f"{part}: {tail}"
    return "…" + tail[-_SHOWN:] if len(tail) < len(message) else message[:_SHOWN] + "…"


#: How much of a quoted line a report shows (titles show less: ``shown``).
SHOWN_LINE = 400


def clipped(text: str) -> str:
    """A quoted line short enough for a report's evidence, keeping its start (where it was
    raised) and its end: a wrapped error chain ends in its innermost error, which says
    why and names the layer at fault."""
    if len(text) <= SHOWN_LINE:
        return text
    half = SHOWN_LINE // 2
    return f"{text[:half - 1]}…{text[-half:]}"


def message_of(line: str) -> str:
    """The human part of a log line: logrus ``msg`` (with its ``error``), zap/JSON ``msg``
    and ``error``, klog's text after the header, else the line without its timestamp. A
    ``msg`` key after a relayed program's output (``stderr: ``) is that program's, not this
    line's: the whole chain is the message (``_RELAYED_OUTPUT``)."""
    line = without_prefix(line.strip())
    if line.startswith("{"):
        text = _json_message(line)
        if text:
            return text
    found = _MSG_KV.search(line)
    if found is not None and _RELAYED_OUTPUT.search(line, 0, found.start()) is not None:
        found = None  # a relayed program's key, not this line's
    if found is not None:
        msg = _unescape(found["msg"])
        err = _ERR_KV.search(line)
        if err is not None and err["err"] and err["err"] not in msg:
            msg = f"{msg}: {_unescape(err['err'])}"
        return msg.strip()[:MAX_LINE]
    zap = _ZAP_CONSOLE.match(line)
    if zap is not None:
        return _zap_message(line[zap.end():])
    klog = _KLOG.match(line) or _FLUENT_BIT.match(line) or _TRACING.match(line)
    if klog is not None:
        return line[klog.end():].strip()[:MAX_LINE]
    return _TIMESTAMP.sub("", line, count=1).strip()[:MAX_LINE]


def _zap_message(rest: str) -> str:
    """A zap console line's message, with the ``error`` of the JSON fields after it."""
    msg, tab, fields = rest.partition("\t{")
    err = _json_message("{" + fields) if tab else ""
    if tab and not err:  # fields cut short or not JSON: keep them, they may hold the error
        return rest.strip()[:MAX_LINE]
    return (f"{msg.strip()}: {err}" if err else msg.strip())[:MAX_LINE]


def _json_message(line: str) -> str:
    try:
        doc = json.loads(line)
    except ValueError:
        return ""
    if not isinstance(doc, dict):
        return ""
    msg = str(doc.get("msg") or doc.get("message") or "")
    err = str(doc.get("error") or doc.get("Error") or doc.get("err") or "")
    if err and err not in msg:
        msg = f"{msg}: {err}" if msg else err
    return msg.strip()[:MAX_LINE]


def _unescape(text: str) -> str:
    return text.replace('\\"', '"').replace("\\\\", "\\")
