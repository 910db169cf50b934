"""Reaching the cluster of ``-cluster``: a local cluster started here, or a scheduler.

Kept apart from the executor (:mod:`guti.referee.execution.cluster`) because each way
to fail here must be one clear line, fast: a refused address at once (Dask's client
retries for its whole timeout), an unreachable one within :data:`CONNECT_TIMEOUT`, a
``tls://`` address without Dask's certificate settings named as such (Dask raises a
``TypeError``), and a local cluster that must not take Ctrl-C from guti.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
from collections.abc import Callable
from typing import Any

import dask
from distributed import Client, LocalCluster

from guti.referee.execution.cluster_address import ClusterAddress, ClusterError

#: Seconds to reach a remote scheduler.
CONNECT_TIMEOUT = 30.0
#: Dask's settings for the cluster of ``local:N`` (guti's own, on the machine the engines
#: play on): its housekeeping woken less often (event-loop ticks, system and memory
#: monitors, statistical profiler) and no work stealing (each worker's games are bounded
#: by the run's resource). Idle, the scheduler and two workers then take 1.6 % of a core,
#: not 11 %.
LOCAL_CONFIG = {
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "5s",
    "distributed.worker.memory.monitor-interval": "1s",
    "distributed.worker.profile.enabled": False,
    "distributed.scheduler.work-stealing": False,
}
#: Dask's settings naming the client's TLS certificate, key and authority.
TLS_SETTINGS = ("DASK_DISTRIBUTED__COMM__TLS__CA_FILE, DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT "
                "and DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY")


async def start_local(workers: int, keep: Callable[[Any], None]) -> Any:
    """A local cluster of ``workers`` single-thread worker processes, handed to ``keep``
    before it starts (so that a run aborted while it starts still closes it), and its
    client.

    Ctrl-C at the terminal is guti's alone (as engines' are locally): SIGINT is blocked
    while the workers are spawned, a mask they inherit across exec (the plugin then
    ignores it there), and a Ctrl-C that came meanwhile reaches guti the moment it is
    unblocked here: a run is stoppable from its first instant."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        with dask.config.set(LOCAL_CONFIG):
            # its scheduler's HTTP server on a port the system picks: the default, 8787,
            # may be another run's (Dask then warns on stderr) or anything else's
            cluster = LocalCluster(
                n_workers=workers, threads_per_worker=1, processes=True, asynchronous=True,
                dashboard_address=":0", silence_logs=logging.CRITICAL)
            keep(cluster)
            try:
                await cluster
            except Exception as exc:  # e.g. its workers killed by a Ctrl-C as they start
                _quiet_dask_tasks()
                raise ClusterError(f"-cluster local:{workers}: the local cluster did not "
                                   f"start ({type(exc).__name__}: {exc})") from None
            except BaseException:  # the run aborted while the cluster started
                _quiet_dask_tasks()
                raise
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
    return await Client(cluster, asynchronous=True, set_as_default=False)


async def connect_remote(address: ClusterAddress) -> Any:
    """A client of the scheduler at ``address``; else ClusterError. Its workers may come
    later (a batch system's jobs start when they start): the run waits for them."""
    text, scheduler = address.text, address.scheduler or address.text
    scheme = scheduler.split("://", 1)[0]
    if scheme == "tls" and not dask.config.get("distributed.comm.tls.client.cert", None):
        raise ClusterError(f"-cluster {text}: TLS needs Dask's certificate settings "
                           f"({TLS_SETTINGS}); see the clusters guide")
    if scheme in ("tcp", "tls"):
        await _reachable(text, scheduler)
    client: Any = None
    try:
        client = Client(scheduler, asynchronous=True, set_as_default=False,
                        timeout=CONNECT_TIMEOUT)
        # bounded here too: Dask's own timeout does not cover a scheduler that accepts
        # the connection and never answers
        await asyncio.wait_for(_started(client), CONNECT_TIMEOUT)
    except (TypeError, ValueError) as exc:
        await _closed(client)
        if scheme == "tls":
            raise ClusterError(f"-cluster {text}: TLS needs Dask's certificate settings "
                               f"({TLS_SETTINGS}); see the clusters guide") from None
        raise ClusterError(f"-cluster {text}: {exc}") from None
    except (OSError, TimeoutError) as exc:
        await _closed(client)
        why = str(exc) or f"no answer within {CONNECT_TIMEOUT:g} s"
        raise ClusterError(f"cannot reach the Dask scheduler at {text}: {why}") from None
    except Exception as exc:  # another program's answer, read as Dask's frames
        await _closed(client)
        raise ClusterError(f"-cluster {text}: what answers there is not a Dask scheduler "
                           f"(its first bytes read as Dask's: {type(exc).__name__})") from None
    except BaseException:
        await _closed(client)
        raise
    return client


async def _started(client: Any) -> None:
    await client


async def _closed(client: Any) -> None:
    """Close a client that did not start (so that none of its coroutines is left never
    awaited); whatever closing it says is of no use to the run."""
    if client is not None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.shield(client.close(timeout=5)), 10)


async def _reachable(text: str, scheduler: str) -> None:
    """Fail at once, in one line, when nothing listens at the address (Dask's client
    would retry a refused connection for its whole timeout)."""
    host, _, port = scheduler.split("://", 1)[1].rpartition(":")
    host = host.strip("[]")
    try:
        _reader, writer = await asyncio.wait_for(
            asyncio.open_connection(host, int(port)), CONNECT_TIMEOUT)
    except (OSError, TimeoutError, socket.gaierror) as exc:
        why = "connection refused" if isinstance(exc, ConnectionRefusedError) else (
            str(exc) or type(exc).__name__)
        raise ClusterError(f"cannot reach the Dask scheduler at {text}: {why}") from None
    writer.close()


def quiet_dask() -> None:
    """Dask's own log lines off: what goes wrong is told in guti's one-line messages
    (Dask configures some of its loggers one by one, so each is set)."""
    for name in ["distributed", *logging.root.manager.loggerDict]:
        if name.split(".")[0] == "distributed":
            logging.getLogger(name).setLevel(logging.CRITICAL)


def _quiet_dask_tasks() -> None:
    """A local cluster torn down while it starts leaves Dask's own start-up tasks failed
    with nobody to ask for their errors; asyncio would print each as a traceback when
    it is collected. Those are not the user's to read: the run says what happened in
    its own line. Every other error goes on to the loop's handler as before."""
    loop = asyncio.get_running_loop()
    previous = loop.get_exception_handler()

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        frame = exc.__traceback__ if isinstance(exc, BaseException) else None
        while frame is not None:  # raised in Dask's code: one of its own tasks
            if f"{os.sep}distributed{os.sep}" in frame.tb_frame.f_code.co_filename:
                return
            frame = frame.tb_next
        if previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    loop.set_exception_handler(handler)
