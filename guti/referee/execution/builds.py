"""An engine's ``build`` and ``requires``, seen to the same way on this machine
(:mod:`guti.referee.config.engine_build`) and on a cluster's workers
(:mod:`guti.referee.execution.remote_games`)."""

from __future__ import annotations

import shlex
import shutil
import signal
import subprocess
from collections.abc import Sequence

from guti.referee.process.group import signal_group

#: Longest a build may take before the engine is skipped.
BUILD_TIMEOUT = 300


def run_build(argv: Sequence[str], cwd: str | None) -> str | None:
    """Run a build command in ``cwd``; None when it worked, else why not (its last line of
    output; bytes that are not UTF-8 are shown replaced, never a crash). The build runs in
    a process group of its own, killed whole when it takes too long or the caller is
    interrupted: what it started (a ``make -j``'s compilers) does not outlive it."""
    try:
        proc = subprocess.Popen(list(argv), cwd=cwd, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, errors="replace",
                                start_new_session=True)
    except OSError as exc:
        return str(exc)
    try:
        stdout, stderr = proc.communicate(timeout=BUILD_TIMEOUT)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        return f"{shlex.join(argv)} took more than {BUILD_TIMEOUT} s"
    except BaseException:
        _kill_group(proc)
        raise
    if proc.returncode != 0:
        return ((stderr or stdout).strip().splitlines()[-1:] or ["no output"])[0]
    return None


def _kill_group(proc: subprocess.Popen[str]) -> None:
    signal_group(proc.pid, signal.SIGKILL)
    proc.communicate()


def first_missing(programs: Sequence[str]) -> str | None:
    """The first of ``programs`` not found on PATH (None: all are there)."""
    return next((tool for tool in programs if shutil.which(tool) is None), None)
