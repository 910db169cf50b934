"""Where ``-cluster`` sends the games: a running Dask scheduler, or a local cluster of N.

Kept apart from :mod:`guti.referee.execution.cluster` so that reading the settings never
imports Dask: ``-cluster`` is checked (one line, exit 2) before anything is started,
and a run without it does not load Dask at all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from guti.referee.process.errors import EngineStartError

#: ``local:N``: a cluster of N worker processes started (and stopped) by guti itself.
_LOCAL = re.compile(r"local:([0-9]{1,6})")
#: The most workers of a local cluster: each is a process of its own on this machine.
MAX_LOCAL_WORKERS = 64
#: ``SCHEME://HOST:PORT``: the address ``dask scheduler`` prints (tcp, tls, ws, wss; not
#: ``inproc``, which is within one process, nor ``ucx``, which needs UCX installed).
_REMOTE = re.compile(r"(tcp|tls|ws|wss)://\S+:(\d+)")


#: What every worker checks and does for one engine before the first game: (engine name,
#: its ``build`` command (empty: none), the folder it runs in, the programs it ``requires``
#: on PATH, the folder sent to every worker ("": none)). From the TOML file; a worker
#: lacking one refuses the run.
EngineSetup = tuple[str, tuple[str, ...], str, tuple[str, ...], str]


class ClusterAddressError(ValueError):
    """A ``-cluster`` value that is neither ``SCHEME://HOST:PORT`` nor ``local:N``."""


class ClusterError(EngineStartError):
    """The cluster cannot play the tournament: the scheduler is unreachable, a worker
    lacks an engine or runs another guti. An :class:`EngineStartError`, so every command
    reports it the way it reports an engine that cannot start: one line, exit 2."""


def dask_missing(address: ClusterAddress, exc: ImportError) -> ClusterError:
    """What ``-cluster`` says when Dask cannot be imported (the ``cluster`` extra is not
    installed)."""
    return ClusterError(f"-cluster {address.text} needs Dask: pip install 'guti[cluster]' "
                        f"({exc})")


@dataclass(frozen=True)
class ClusterAddress:
    """``local`` workers to start, or the ``scheduler`` address to connect to;
    ``per_worker``: games at once on each worker (``-concurrency`` with ``-cluster``;
    0: as many as the worker has threads)."""

    text: str
    scheduler: str | None = None
    local: int = 0
    per_worker: int = 0


def parse_cluster(text: str) -> ClusterAddress:
    """``tcp://HOST:PORT`` (any Dask comm scheme) or ``local:N`` (N >= 1)."""
    local = _LOCAL.fullmatch(text)
    if local is not None:
        workers = int(local.group(1))
        if workers < 1:
            raise ClusterAddressError(f"-cluster {text}: a local cluster needs at least 1 worker")
        if workers > MAX_LOCAL_WORKERS:
            raise ClusterAddressError(f"-cluster {text}: at most {MAX_LOCAL_WORKERS} local "
                                      "workers (each is a process on this machine)")
        return ClusterAddress(text, local=workers)
    remote = _REMOTE.fullmatch(text)
    if remote is not None:
        if not 1 <= int(remote.group(2)) <= 65535:
            raise ClusterAddressError(f"-cluster {text}: a port is a number from 1 to 65535")
        return ClusterAddress(text, scheduler=text)
    raise ClusterAddressError(
        f"-cluster {text}: expected a Dask scheduler address tcp://HOST:PORT or local:N"
    )

