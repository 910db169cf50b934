"""Engines die with their referee, even when the referee is killed with SIGKILL.

Why: an engine that ignores EOF on stdin (or a grandchild it forked that ignores
SIGTERM) would otherwise run on for ever after ``kill -9`` of guti, since guti gets
no chance to clean up. Two mechanisms, both done by the kernel or by a process that
outlives guti:

- **the mark**: every engine is started with ``GUTI_ENGINE_OF=PID:N`` in its environment
  (:func:`engine_environment`; ``PID`` is the referee's, ``N`` the engine's number), which
  its children inherit, even those that leave its process group with ``setsid()``.
- **the lifeline**: a tiny watcher process (forked from guti before its event loop starts
  where it can, :func:`guti.referee.process.forked.start_lifeline`, else started as a new Python
  with the first engine; in its own session so terminal signals do not reach it, and with
  no parent-death signal: it outlives guti) reads ``+PGID`` / ``-PGID`` lines from
  a pipe whose only writer is guti. When the pipe ends (guti exited, normally or
  killed), it SIGKILLs every process group still registered, grandchildren included,
  then every process that bears its referee's mark (an engine started just before guti
  died, before its group was registered; a child that left its group), and exits.

Engines get no parent-death signal (``prctl(PR_SET_PDEATHSIG)``) of their own any more:
setting it needs Python code between fork and exec (``preexec_fn``), which makes
``subprocess`` fork the whole referee instead of using ``vfork``, and the fork holds up
the event loop, and with it every game's clock, for 10-25 ms per engine started. The
lifeline and the mark cover what the signal did. (:func:`die_with_parent` is still what
guti's own forked children use.)

:func:`watch` registers a group when an engine starts, :func:`release` after it has
been reaped; :func:`kill_registered` SIGKILLs every registered group at once (an abort,
or the referee's last-resort exit). Off Linux only the lifeline applies.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
from typing import IO, Any

_PR_SET_PDEATHSIG = 1

# Run with ``referee`` set to guti's pid (not read from ``getppid()``, which is another
# process's once guti has died before the watcher got to its first line).
_WATCHER = r"""
import os, signal
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGHUP, signal.SIG_IGN)
mark = b"\0GUTI_ENGINE_OF=%d:" % referee
groups, rest = set(), b""
while True:
    try:
        data = os.read(0, 4096)
    except InterruptedError:
        continue
    except OSError:
        break
    if not data:
        break
    *lines, rest = (rest + data).split(b"\n")
    for line in lines:
        if line[:1] == b"+":
            groups.add(int(line[1:]))
        elif line[:1] == b"-":
            groups.discard(int(line[1:]))
for pgid in groups:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass
for _ in range(3):
    marked = []
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        try:
            with open("/proc/%s/environ" % entry, "rb") as fh:
                if mark in b"\0" + fh.read():
                    marked.append(int(entry))
        except (OSError, ValueError):
            pass
    for pid in marked:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    if not marked:
        break
"""

_registered: set[int] = set()
#: Held while the registry or the watcher changes: builds register their groups from
#: worker threads while the event loop's thread registers engines.
_lock = threading.Lock()
_watcher: subprocess.Popen[bytes] | _ForkedWatcher | None = None
_pipe: IO[bytes] | None = None
#: Linux's ``prctl`` from the C library (None elsewhere): the parent-death signal here, and
#: a process's name in :mod:`guti.referee.process.forked`.
prctl: Any = None
if sys.platform.startswith("linux"):
    with contextlib.suppress(OSError, AttributeError):
        prctl = ctypes.CDLL(None, use_errno=True).prctl  # resolved now, not after fork


#: The environment variable that marks an engine and everything it starts.
ENGINE_MARK = "GUTI_ENGINE_OF"
_engines_started = 0


def engine_environment() -> dict[str, str]:
    """The environment an engine is started with: guti's, and the mark
    ``GUTI_ENGINE_OF=PID:N`` (this process's pid, the engine's number here)."""
    global _engines_started
    _engines_started += 1
    return {**os.environ, ENGINE_MARK: f"{os.getpid()}:{_engines_started}"}


def mark_of(pid: int) -> str | None:
    """The engine mark in the environment of process ``pid`` (None: none, or unreadable,
    as for a zombie or another user's process)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    key = f"\0{ENGINE_MARK}=".encode()
    at = (b"\0" + data).find(key)
    if at < 0:
        return None
    end = data.find(b"\0", at + len(key) - 1)
    return data[at + len(key) - 1 : end if end >= 0 else None].decode("ascii", "replace")


def die_with_parent(parent: int) -> None:
    """Have the kernel SIGKILL this process when ``parent`` dies (and exit at once if
    ``parent`` is already gone): in a forked child before exec (so it must stay
    async-signal simple), or first thing in a new interpreter that ``parent`` started."""
    if prctl is not None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(137)


class _ForkedWatcher:
    """The watcher forked from this process (:func:`guti.referee.process.forked.start_lifeline`),
    not started as a new Python: what :func:`_start_watcher` asks of it."""

    def __init__(self, pid: int) -> None:
        self.pid = pid

    def poll(self) -> int | None:
        """None while it runs (reaped here once it has ended)."""
        try:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:
            return 0
        return None if pid == 0 else status


def has_watcher() -> bool:
    """Whether a watcher runs for this process."""
    return _pipe is not None and _watcher is not None and _watcher.poll() is None


def run_watcher(referee: int) -> int:
    """The watcher's own loop, in a child forked from guti, ``referee`` (the same code as
    the watcher started as a new Python, and like it writing to nothing of guti's)."""
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    os.close(null)
    code = {"__name__": "guti_lifeline", "referee": referee}
    exec(_WATCHER, code)  # noqa: S102 - this module's own text
    return 0


def adopt_watcher(pid: int, pipe: int) -> None:
    """The watcher forked from this process: ``pid``, and ``pipe``, its input's write end.
    The groups registered so far are sent to it."""
    global _watcher, _pipe
    with _lock:
        _watcher = _ForkedWatcher(pid)
        _pipe = os.fdopen(pipe, "wb", buffering=0)
        for pgid in _registered:
            _send(f"+{pgid}")


#: Seconds :func:`stop_watcher` waits for the watcher to end (it scans ``/proc`` once).
STOP_TIMEOUT = 2.0


def stop_watcher() -> None:
    """End this process's watcher and reap it, as the process ends well: its pipe closed,
    it does what it does at guti's death (kills what is still registered) and exits.
    Reaped here, because otherwise whoever adopts it once this process has gone (a
    subreaper: guti for its referee processes, a test runner for guti) keeps it a zombie."""
    global _watcher, _pipe
    with _lock:
        watcher, pipe = _watcher, _pipe
        _watcher = _pipe = None
    if pipe is not None:
        with contextlib.suppress(OSError):
            pipe.close()
    deadline = time.monotonic() + STOP_TIMEOUT
    while watcher is not None and watcher.poll() is None and time.monotonic() < deadline:
        time.sleep(0.002)


atexit.register(stop_watcher)  # guti's own watcher, as guti ends (a no-op without one)


def _start_watcher() -> IO[bytes] | None:
    global _watcher, _pipe
    if has_watcher():
        return _pipe
    try:
        _watcher = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", f"referee = {os.getpid()}\n{_WATCHER}"],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True, close_fds=True,
        )
    except OSError:
        return None
    _pipe = _watcher.stdin
    for pgid in _registered:
        _send(f"+{pgid}")
    return _pipe


def _send(line: str) -> None:
    pipe = _pipe
    if pipe is None:
        return
    with contextlib.suppress(OSError, ValueError):
        pipe.write(line.encode() + b"\n")
        pipe.flush()


def ensure_watcher() -> None:
    """Start the watcher now if none runs: before starting a process that must die with
    this one, so that it bears a mark the watcher kills by from its first instant."""
    with _lock:
        _start_watcher()


def watch(pgid: int) -> None:
    """Register an engine's process group: killed by the lifeline if guti dies."""
    with _lock:
        _registered.add(pgid)
        if _start_watcher() is not None:
            _send(f"+{pgid}")


def release(pgid: int) -> None:
    """The group is gone (reaped): nothing left to kill for it."""
    with _lock:
        if pgid in _registered:
            _registered.discard(pgid)
            _send(f"-{pgid}")


def forget_inherited() -> None:
    """In a child forked from guti (:mod:`guti.referee.process.forked`): the groups and the
    watcher are guti's, not the child's; the child registers its own engines afresh (and
    starts its own watcher with the first of them)."""
    global _watcher, _pipe, _lock
    _lock = threading.Lock()  # a thread of the parent's may have held it at the fork
    _registered.clear()
    _watcher = None
    _pipe = None


def is_registered(pgid: int) -> bool:
    """Whether ``pgid`` is the group of an engine started and not yet released."""
    return pgid in _registered


def kill_registered() -> None:
    """SIGKILL every registered engine group now (safe in a signal handler: no locks)."""
    for pgid in list(_registered):
        with contextlib.suppress(OSError):
            os.killpg(pgid, signal.SIGKILL)
