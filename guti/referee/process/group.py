"""Killing and reaping a whole process group, so no engine leaves anything behind.

Each engine is started as the leader of its own session/process group
(``start_new_session=True``); everything it forks stays in that group unless
it calls ``setsid`` itself. Those that do are caught another way: they carry the
engine's mark in their environment (:func:`guti.referee.process.lifeline.engine_environment`)
and, guti being their subreaper, become guti's children once their parent dies, so
:func:`children` finds them when the engine has quit.

On Linux the referee also makes itself a *child subreaper*
(``prctl(PR_SET_CHILD_SUBREAPER)``): a grandchild orphaned by a dead engine
is re-parented to the referee instead of PID 1, so the referee can reap it
(PID 1 in a container often never reaps, leaving zombies). Only pids found
in an engine's own group are ever reaped here, so this never steals the
exit status of a child someone else (asyncio, ``subprocess``) waits for.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys

from guti.referee.process.usage import stat_fields

_PR_SET_CHILD_SUBREAPER = 36
_subreaper_done = 0  # the pid of the process that became one (fork does not pass it on)


def enable_subreaper() -> bool:
    """Make this process a child subreaper (Linux; once per process). True if in effect."""
    global _subreaper_done
    if _subreaper_done == os.getpid():
        return True
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        ok = bool(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        ok = False
    _subreaper_done = os.getpid() if ok else 0
    return ok


def _proc_stat(pid: int) -> tuple[str, int, int] | None:
    """(state, ppid, pgrp) of ``pid`` from /proc, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    rest = stat_fields(data)
    try:
        return rest[0].decode(), int(rest[1]), int(rest[2])
    except (IndexError, ValueError):
        return None


def group_members(pgid: int) -> list[tuple[int, str, int]]:
    """Processes in group ``pgid`` as ``(pid, state, ppid)``, zombies included (Linux /proc).

    ``killpg(pgid, 0)`` asks first: when no process has the group id, not even a zombie
    (the usual case once an engine has quit), the answer is ``[]`` at once, without the
    scan of every process's stat (milliseconds on a busy machine; an engine's quit asks
    three times). Off Linux (no /proc) that answer is all there is: ``[(pgid, "?", 0)]``
    while anything in the group exists that we may signal.
    """
    if pgid <= 1:
        return []  # not an engine's group (0 would mean our own in killpg)
    try:
        os.killpg(pgid, 0)
        signalable = True
    except ProcessLookupError:
        return []
    except PermissionError:
        signalable = False  # zombies of others, a foreign group: /proc tells the rest
    if not os.path.isdir("/proc/self"):
        return [(pgid, "?", 0)] if signalable else []
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        stat = _proc_stat(int(entry))
        if stat is not None and stat[2] == pgid:
            members.append((int(entry), stat[0], stat[1]))
    return members


def live_members(pgid: int) -> list[int]:
    """Pids of group ``pgid`` that are not zombies (still running or stopped)."""
    return [pid for pid, state, _ in group_members(pgid) if state != "Z"]


def signal_group(pgid: int, sig: int) -> bool:
    """Send ``sig`` to the whole group; False if the group no longer exists."""
    try:
        os.killpg(pgid, sig)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        # Only zombies left (or a foreign pgid): nothing we may signal.
        return False


def reap_orphans(pgid: int, leader: int) -> int:
    """Reap the ended members of ``pgid`` that are this process's children (orphans that
    came back to it, their subreaper), except ``leader``, which whoever started it reaps
    (asyncio's child watcher). Until reaped each is a zombie, counted against the
    engine's process limit. Returns how many were reaped.

    ``waitid`` finds them, a system call each; only when it shows the leader (ended, not
    yet reaped by its starter) are the group's members looked up in ``/proc`` instead."""
    if not hasattr(os, "waitid"):
        return _reap_listed(pgid, leader)
    reaped = 0
    while True:
        try:
            ended = os.waitid(os.P_PGID, pgid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return reaped
        if ended is None:
            return reaped
        if ended.si_pid == leader:  # it hides the others from waitid
            return reaped + _reap_listed(pgid, leader)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(ended.si_pid, os.WNOHANG)
        reaped += 1


def _reap_listed(pgid: int, leader: int) -> int:
    """:func:`reap_orphans` by the group's members listed in ``/proc``."""
    me = os.getpid()
    reaped = 0
    for pid, state, ppid in group_members(pgid):
        if pid != leader and ppid == me and state == "Z":
            with contextlib.suppress(ChildProcessError):
                if os.waitpid(pid, os.WNOHANG)[0] == pid:
                    reaped += 1
    return reaped


def children() -> list[int]:
    """This process's children, from ``/proc/self/task/*/children`` (Linux; [] elsewhere):
    a read per thread, not a scan of every process."""
    found: list[int] = []
    with contextlib.suppress(OSError):
        for tid in os.listdir("/proc/self/task"):
            with contextlib.suppress(OSError), open(f"/proc/self/task/{tid}/children") as fh:
                found += [int(pid) for pid in fh.read().split()]
    return found
