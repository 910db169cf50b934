"""An engine's ``build`` and ``requires``, seen to the same way on this machine
(:mod:`guti.referee.config.engine_build`) and on a cluster's workers
(:mod:`guti.referee.execution.remote_games`).

A build runs in a process group of its own, registered with the lifeline
(:mod:`guti.referee.process.lifeline`) while it runs and marked as an engine is: if the
process that started it dies, even by SIGKILL, the build dies with it, all it started
included. A build started for a run (on a worker) is also killed when that run is
aborted or closed (:func:`kill_builds`).
"""

from __future__ import annotations

import shlex
import shutil
import signal
import subprocess
import threading
from collections.abc import Sequence

from guti.referee.process import lifeline
from guti.referee.process.group import signal_group

#: Longest a build may take before the engine is skipped.
BUILD_TIMEOUT = 300

_running: dict[int, str | None] = {}  # a running build's process group -> its run
_stopped: set[int] = set()  # those of them killed by kill_builds
#: The runs kill_builds was called for: a build of one that starts later, or whose start
#: was under way then, is killed as it is registered (run ids are never used again).
_killed_runs: set[str] = set()
_running_lock = threading.Lock()  # builds run in worker threads


def run_build(argv: Sequence[str], cwd: str | None, run: str | None = None) -> str | None:
    """Run a build command in ``cwd``; None when it worked, else why not (its last line of
    output; bytes that are not UTF-8 are shown replaced, never a crash). The build runs in
    a process group of its own, killed whole when it takes too long, when the caller is
    interrupted, when ``run`` is aborted (:func:`kill_builds`) and once it has ended:
    what it started (a ``make -j``'s compilers, a build tool's daemon) does not outlive
    it."""
    lifeline.ensure_watcher()
    try:
        proc = subprocess.Popen(list(argv), cwd=cwd, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, errors="replace",
                                start_new_session=True, env=lifeline.engine_environment())
    except OSError as exc:
        return str(exc)
    lifeline.watch(proc.pid)
    with _running_lock:
        _running[proc.pid] = run
        if run is not None and run in _killed_runs:  # aborted while it started
            _stopped.add(proc.pid)
            signal_group(proc.pid, signal.SIGKILL)
    try:
        stdout, stderr = proc.communicate(timeout=BUILD_TIMEOUT)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        return f"{shlex.join(argv)} took more than {BUILD_TIMEOUT} s"
    except BaseException:
        _kill_group(proc)
        raise
    finally:
        with _running_lock:
            del _running[proc.pid]
            stopped = proc.pid in _stopped
            _stopped.discard(proc.pid)
        signal_group(proc.pid, signal.SIGKILL)  # what it left running
        lifeline.release(proc.pid)
    if stopped:
        return "stopped: its run was aborted"
    if proc.returncode != 0:
        return ((stderr or stdout).strip().splitlines()[-1:] or ["no output"])[0]
    return None


def kill_builds(run: str) -> None:
    """Kill the builds under way for ``run``, each with all it started, and any it starts
    from now on."""
    with _running_lock:
        _killed_runs.add(run)
        for pgid, of in _running.items():
            if of == run:
                _stopped.add(pgid)
                signal_group(pgid, signal.SIGKILL)


def _kill_group(proc: subprocess.Popen[str]) -> None:
    signal_group(proc.pid, signal.SIGKILL)
    proc.communicate()


def first_missing(programs: Sequence[str]) -> str | None:
    """The first of ``programs`` not found on PATH (None: all are there)."""
    return next((tool for tool in programs if shutil.which(tool) is None), None)
