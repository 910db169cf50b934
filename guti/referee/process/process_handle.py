"""One program started as the leader of its own process group, and ended for good.

:class:`ProcessHandle` starts a program (an argv list, never a shell) in a new session,
so that it and everything it forks share one process group, marked as guti's engine in
its environment; if guti dies the lifeline kills its whole group and every process with
the mark (:mod:`guti.referee.process.lifeline`). It is started without running any Python
code between fork and exec (no ``preexec_fn``), so that ``subprocess`` uses ``vfork``: a
fork of the whole referee copies its page tables while its event loop waits, 10-25 ms a
start, during which no other game's reply is read. Its exit is learnt on the event loop
from a pidfd (a descriptor that becomes readable when the process exits; polled a few
times a second where there is none) and the process is then reaped, never by reaping
every child. :meth:`ProcessHandle.stop` ends it
step by step and leaves nothing behind: SIGTERM, then SIGKILL, to the whole group, each
after a bounded wait, then whatever is left of the group is killed and reaped.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import os
import signal
import subprocess
from collections.abc import Callable
from typing import Protocol

from guti.referee.process import lifeline
from guti.referee.process.group import (
    children,
    enable_subreaper,
    group_members,
    live_members,
    reap_orphans,
    signal_group,
)

#: How often the exit is polled where the system has no pidfd (seconds).
EXIT_POLL = 0.05


def describe_exit(returncode: int | None) -> str:
    """``exit code 3`` / ``killed by signal 11 (SIGSEGV)`` / ``still running``."""
    if returncode is None:
        return "still running"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = "?"
        return f"killed by signal {-returncode} ({name})"
    return f"exit code {returncode}"


class ProcessSpec(Protocol):
    """What starting a process needs (an ``EngineConfig`` is one)."""

    @property
    def name(self) -> str: ...
    @property
    def argv(self) -> list[str]: ...
    @property
    def cwd(self) -> str | None: ...
    @property
    def stderr_path(self) -> str | None: ...


_SPAWNER: tuple[int, concurrent.futures.ThreadPoolExecutor] | None = None


def _spawner() -> concurrent.futures.ThreadPoolExecutor:
    """The one thread engines are spawned from (one per process: a thread is not passed on
    by fork). One, not a pool: spawns are mostly waiting for the child's exec, and several
    threads running ``subprocess``'s Python code at once would take the interpreter's
    lock from the event loop for longer."""
    global _SPAWNER
    if _SPAWNER is None or _SPAWNER[0] != os.getpid():
        _SPAWNER = os.getpid(), concurrent.futures.ThreadPoolExecutor(
            1, thread_name_prefix="guti-spawn")
    return _SPAWNER[1]


def end_spawner() -> None:
    """End the spawn thread (a new one starts with the next spawn). Between runs it is idle,
    and a process that forks (the referee processes, the lifeline's watcher) must have no
    thread but its main one, so the caller about to fork ends it first."""
    global _SPAWNER
    if _SPAWNER is not None:
        pid, pool = _SPAWNER
        _SPAWNER = None
        if pid == os.getpid():
            pool.shutdown(wait=True)


def _popen(argv: list[str], cwd: str | None, fds: tuple[int, int, int],
           env: dict[str, str]) -> subprocess.Popen[bytes]:
    """Start the program: a new session, no descriptor of guti's but the three given, and
    no Python code between fork and exec (so ``vfork`` is used, not a fork of guti)."""
    return subprocess.Popen(  # noqa: S603 - an argv list, never a shell
        argv, stdin=fds[0], stdout=fds[1], stderr=fds[2], cwd=cwd,
        start_new_session=True, close_fds=True, env=env)


def _kill_unwanted(started: asyncio.Future[subprocess.Popen[bytes]]) -> None:
    """A process started for a start that was cancelled: kill its group and reap it."""
    if started.cancelled() or started.exception() is not None:
        return
    popen = started.result()
    signal_group(popen.pid, signal.SIGKILL)
    asyncio.get_running_loop().run_in_executor(None, popen.wait)


class ProcessHandle:
    """A started program: its pid (also its process group's id), its exit, its end."""

    def __init__(self, popen: subprocess.Popen[bytes], loop: asyncio.AbstractEventLoop) -> None:
        self._popen = popen
        self._loop = loop
        self.pid = popen.pid
        #: Set once the process has exited and been reaped.
        self.exited = asyncio.Event()
        #: Members of the group killed after the leader exited with its pipes still held
        #: open (:meth:`kill_leftovers`): evidence that the program left processes behind.
        self.orphans_killed: list[int] = []
        self._on_exit: list[Callable[[], None]] = []
        self._pidfd = -1
        self._poll_timer: asyncio.TimerHandle | None = None
        self._released = False
        self._sweep: asyncio.Task[None] | None = None  # the kill of escaped children
        #: The engine mark in its environment (see :func:`lifeline.engine_environment`).
        self.mark: str | None = None
        try:
            self._pidfd = os.pidfd_open(self.pid)
        except (AttributeError, OSError):  # not Linux 5.3+: poll instead
            self._poll_timer = loop.call_later(EXIT_POLL, self._poll)
        else:
            loop.add_reader(self._pidfd, self._check_exit)
        lifeline.watch(self.pid)  # its whole group is killed if guti dies

    @classmethod
    async def spawn(cls, argv: list[str], cwd: str | None, stdin: int, stdout: int,
                    stderr: int) -> ProcessHandle:
        """Exec ``argv`` in ``cwd`` with the given descriptors as its stdin, stdout and
        stderr, as the leader of a new process group; OSError if it cannot be started.

        The spawn runs in a worker thread: even with ``vfork`` the caller waits until the
        child has exec'd (to learn whether it could), on a loaded machine milliseconds,
        which the event loop, and every other game's clock, would otherwise wait too.
        Cancelled meanwhile, the process that was started is killed and reaped."""
        enable_subreaper()  # orphaned grandchildren come back to guti, to be reaped
        loop = asyncio.get_running_loop()
        env = lifeline.engine_environment()
        started = loop.run_in_executor(_spawner(), functools.partial(
            _popen, argv, cwd, (stdin, stdout, stderr), env))
        try:
            popen = await asyncio.shield(started)
        except asyncio.CancelledError:
            started.add_done_callback(_kill_unwanted)
            raise
        handle = cls(popen, loop)
        handle.mark = env[lifeline.ENGINE_MARK]
        return handle

    @property
    def returncode(self) -> int | None:
        """Exit status (negative: killed by that signal), None while running."""
        return self._popen.returncode

    def when_exited(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` (on the loop) once the process has exited."""
        self._on_exit.append(callback)

    def _check_exit(self) -> None:
        """The pidfd is readable, or the poll timer fired: reap the process if it ended."""
        if self._popen.poll() is None:
            return
        self._stop_watching()
        self.exited.set()
        for callback in self._on_exit:
            callback()

    def _poll(self) -> None:
        self._poll_timer = None
        self._check_exit()
        if not self.exited.is_set():
            self._poll_timer = self._loop.call_later(EXIT_POLL, self._poll)

    def _stop_watching(self) -> None:
        if self._pidfd >= 0:
            self._loop.remove_reader(self._pidfd)
            os.close(self._pidfd)
            self._pidfd = -1
        if self._poll_timer is not None:
            self._poll_timer.cancel()
            self._poll_timer = None

    async def wait_exit(self, timeout: float) -> bool:
        """Whether the process has exited, waiting at most ``timeout`` seconds."""
        if not self.exited.is_set() and timeout > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.exited.wait(), timeout)
        return self.exited.is_set()

    def kill_now(self) -> None:
        """SIGKILL the whole group at once (for emergencies such as Ctrl-C); no waiting."""
        if not self._released:
            signal_group(self.pid, signal.SIGKILL)

    def kill_leftovers(self) -> None:
        """SIGKILL what is still running in the group, noting it in :attr:`orphans_killed`
        (the leader exited, but something it started holds its pipes open), and start
        killing what left the group too (:meth:`_kill_escaped`): the pipe only closes
        once every holder is gone."""
        self.orphans_killed = live_members(self.pid)
        signal_group(self.pid, signal.SIGKILL)
        self._sweep = asyncio.get_running_loop().create_task(self._kill_escaped())

    async def stop(self, grace: float, term_grace: float) -> None:
        """End the process for good: wait ``grace`` s for it to exit by itself, SIGTERM the
        group, wait ``term_grace`` s, SIGKILL the group; then kill and reap whatever is
        left of the group. Every wait is bounded."""
        if not await self.wait_exit(grace):
            signal_group(self.pid, signal.SIGTERM)
            if not await self.wait_exit(term_grace):
                signal_group(self.pid, signal.SIGKILL)
                await self.wait_exit(5.0)
        await self._clean_group()
        if self._sweep is not None:
            await self._sweep  # the one :meth:`kill_leftovers` started
        await self._kill_escaped()
        lifeline.release(self.pid)
        self._released = True

    async def _clean_group(self) -> None:
        """The leader is gone: TERM, then KILL, whatever is left in its group, and reap it."""
        pgid = self.pid
        if live_members(pgid):
            signal_group(pgid, signal.SIGTERM)
            for _ in range(10):
                await asyncio.sleep(0.02)
                if not live_members(pgid):
                    break
            else:
                signal_group(pgid, signal.SIGKILL)
                for _ in range(100):
                    if not live_members(pgid):
                        break
                    await asyncio.sleep(0.02)
        # Orphans re-parented to us (subreaper) become our zombies; reap them,
        # retrying briefly for those still being re-parented.
        for _ in range(10):
            reap_orphans(pgid, pgid)
            if not group_members(pgid):
                break
            await asyncio.sleep(0.02)

    async def _kill_escaped(self) -> None:
        """Kill and reap what the program started that left its process group (``setsid``)
        and came back to guti, its subreaper, when its parent died: children of guti with
        this program's mark. Killing one sends its own children back to guti, so this is
        repeated (a few rounds, bounded) until none is left."""
        if self.mark is None:
            return
        for _ in range(10):
            escaped = [pid for pid in children()  # engines' leaders are not looked at
                       if not lifeline.is_registered(pid) and lifeline.mark_of(pid) == self.mark]
            if not escaped:
                return
            for pid in escaped:
                with contextlib.suppress(OSError):
                    os.killpg(pid, signal.SIGKILL)  # its own group, when it leads one
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            self.orphans_killed += escaped
            for pid in escaped:
                for _ in range(50):
                    with contextlib.suppress(ChildProcessError):
                        if os.waitpid(pid, os.WNOHANG)[0] == 0:
                            await asyncio.sleep(0.01)
                            continue
                    break

    def abandon(self) -> None:
        """The process is no longer wanted (its owner is closing without :meth:`stop`,
        e.g. cancelled): SIGKILL its group if it still runs; its exit is still watched,
        so it is reaped when it comes."""
        if not self.exited.is_set():
            signal_group(self.pid, signal.SIGKILL)
