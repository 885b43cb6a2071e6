"""How a live command reaches the cluster: resolved once, then handed down.

A live ``diagnose``, ``validate`` or ``version`` makes one ``ClusterAccess`` from its flags
(``--kubeconfig``, ``--context``, ``--request-timeout``) and hands it to whatever talks to
the cluster: the collector, validate's live checks (the second DCGM scrape), its active
checks, and the report header that names the context. The kubeconfig is read, the context
chosen and the exec credential plugin run once, the first time one of them needs the
cluster; the others get the same resolved config. Each of them still makes its own client
from it (``api()``) and closes it when done: a collection's memory budget counts from its
own client, and nothing stays connected while the checks run.

The first use, not the command's start, reads the kubeconfig, so bad usage (a malformed
selector, flags that do not go together) is still refused before any kubeconfig is read or
any plugin runs. The credential plugin's token serves the whole run, as before within one
client (gpunode.collect.credentials).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from lightkube.config.kubeconfig import SingleConfig

from gpunode.collect.credentials import plugin_credentials
from gpunode.collect.kube import KubeApi, Timeouts, load_config
from gpunode.deadline import within_run

#: The context a report names when gpunode runs in a pod with no kubeconfig.
IN_CLUSTER = "in-cluster"


@dataclass
class ClusterAccess:
    """The cluster a live command reads, as its flags name it; resolved on first use, once."""

    kubeconfig: Path | None = None
    context: str | None = None
    #: ``--request-timeout`` in seconds (None: the defaults of gpunode.collect.kube.Timeouts)
    request_timeout_s: float | None = None
    _config: SingleConfig | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def timeouts(self) -> Timeouts:
        return Timeouts.of(self.request_timeout_s)

    def config(self) -> SingleConfig:
        """The chosen context with its credential plugin's answer in place of the plugin:
        kubectl's order (--kubeconfig, $KUBECONFIG, ~/.kube/config, in-cluster), read and
        run the first time, then kept. UsageError (exit 2) or SourceUnreachable (exit 3)."""
        if self._config is None:
            loaded = load_config(self.kubeconfig, self.context)
            self._config = plugin_credentials(loaded, within_run(self.timeouts.plugin_s))
        return self._config

    def api(self) -> KubeApi:
        """A new client on the resolved config; the caller closes it."""
        return KubeApi(self.config(), timeouts=self.timeouts)

    @property
    def resolved(self) -> bool:
        """Whether the kubeconfig has been read (a failed read leaves it unresolved)."""
        return self._config is not None

    def context_name(self) -> str | None:
        """The context read, for a report's header: ``--context``, else the one the
        kubeconfig chose, ``in-cluster`` in a pod without a kubeconfig; None before the
        cluster was reached (nothing was resolved)."""
        if self.context:
            return self.context
        if self._config is None:
            return None
        return IN_CLUSTER if self._config.fname is None else self._config.context_name
