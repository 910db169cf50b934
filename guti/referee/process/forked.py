"""A child process forked from guti's own, running a function of guti's, ready at once.

Why: a new Python process that imports guti's referee (``python -m ...``) takes 0.1 s or
more of CPU before it can play (the interpreter, then some 100 modules), and a run of
``-referees 2`` starts two of them before its first game. A child forked from guti
already has every one of those modules, so it is ready in about a millisecond.

Forking a process that runs an event loop, or threads, copies a state the child cannot
use (the loop's file descriptors and signal plumbing, locks held by other threads), so
:func:`fork_child` refuses unless it is called on the main thread with no loop running
and no other thread alive: the caller forks before it starts its loop, and falls back to
starting a new interpreter (``asyncio.create_subprocess_exec``) otherwise. In the child,
before the function runs:

- it is a session of its own (terminal signals reach guti alone) and the kernel kills it
  when guti dies (the parent-death signal, as for an engine);
- every file descriptor it inherited from guti but 0, 1 and 2 is closed (its standard
  input is the pipe from guti, its standard output the pipe to guti, its standard error
  guti's). Inherited, not all: a library's at-fork handler may have made its own in the
  child already (libuv re-creates its signal lock's pipe there, and aborts the process
  when that pipe is gone), so what is closed is what has the same file (device and
  inode) as guti had at that number just before the fork;
- signal handlers guti installed are reset, no signal wakes guti's loop, the lifeline's
  registry (:mod:`guti.referee.process.lifeline`) starts empty, and everything inherited is
  frozen out of the garbage collector (its finalisers, such as a file's close, never run in
  the child);
- the function's return value is the exit status, and the child ends with ``os._exit``:
  it never returns into the code that forked it.

In guti's loop, :meth:`ForkedChild.adopt` makes the child a :class:`ForkedProcess` with
what the caller used of ``asyncio.subprocess.Process``: ``pid``, ``returncode``,
``stdin`` (write, is_closing), ``stdout`` (a StreamReader) and ``wait()``. The child's exit
is learnt from a pidfd (Linux 5.3), never by reaping every child.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import os
import select
import signal
import sys
import threading
import traceback
from collections.abc import Callable

from guti.referee.process import lifeline
from guti.referee.process.process_handle import end_spawner

_PR_SET_NAME = 15


def can_fork() -> bool:
    """Whether :func:`fork_child` may fork here and now (else: start a new interpreter)."""
    if not sys.platform.startswith("linux") or not hasattr(os, "pidfd_open"):
        return False
    if threading.current_thread() is not threading.main_thread():
        return False
    try:
        asyncio.get_running_loop()
        return False
    except RuntimeError:
        pass
    end_spawner()  # guti's own spawn thread, idle outside a running loop
    return threading.active_count() == 1


class ForkedChild:
    """A forked child before guti's loop runs: its pid and guti's ends of its pipes."""

    def __init__(self, pid: int, to_child: int, from_child: int) -> None:
        self.pid = pid
        self.to_child = to_child
        self.from_child = from_child
        self.adopted = False

    async def adopt(self) -> ForkedProcess:
        """The child as a process of the running loop (once)."""
        self.adopted = True
        return await ForkedProcess.connect(self)

    def discard(self, grace: float = 2.0) -> None:
        """Not adopted: close its input (it ends as at guti's end of input), wait for it
        up to ``grace`` s, then kill it; reaped either way."""
        if self.adopted:
            return
        self.adopted = True
        for fd in (self.to_child, self.from_child):
            with contextlib.suppress(OSError):
                os.close(fd)
        try:
            pidfd = os.pidfd_open(self.pid)
        except OSError:
            return
        try:
            ready, _, _ = select.select([pidfd], [], [], grace)
            if not ready:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self.pid, 0)
        finally:
            os.close(pidfd)


def fork_child(run: Callable[[], int], name: str, die_with_parent: bool = True) -> ForkedChild:
    """Fork a child that runs ``run()`` (see the module docstring); OSError if it cannot.
    ``name`` is the child's process name (``/proc/PID/comm``, what ``top`` shows);
    ``die_with_parent=False``: no parent-death signal (the lifeline's watcher, which must
    outlive guti)."""
    if not can_fork():
        raise OSError("cannot fork here: an event loop or another thread is running")
    parent = os.getpid()
    _flush_output()  # nothing buffered in guti is written again by the child
    to_read, to_write = os.pipe()
    from_read, from_write = os.pipe()
    inherited = _open_files()
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())
    try:
        pid = os.fork()
    except OSError:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        for fd in (to_read, to_write, from_read, from_write):
            os.close(fd)
        raise
    if pid == 0:  # the child: never returns
        status = 70  # EX_SOFTWARE: the set-up itself failed
        try:
            _become_child(parent if die_with_parent else None, to_read, from_write, inherited,
                          blocked, name)
            status = run()
        except SystemExit as exc:
            status = exc.code if isinstance(exc.code, int) else 1
        except BaseException:  # noqa: BLE001 - said on stderr, then the child ends
            with contextlib.suppress(BaseException):
                os.write(2, traceback.format_exc().encode(errors="replace"))
        finally:
            _flush_output()
            with contextlib.suppress(BaseException):
                lifeline.stop_watcher()  # the child's own, if it started one
            os._exit(status)
    signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    os.close(to_read)
    os.close(from_write)
    return ForkedChild(pid, to_write, from_read)


def _flush_output() -> None:
    """Write out what Python holds for stdout and stderr (closed or broken ones aside)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()


def _open_files() -> dict[int, tuple[int, int]]:
    """This process's open file descriptors and the file of each (device, inode)."""
    found = {}
    for entry in os.listdir("/proc/self/fd"):
        fd = int(entry)
        with contextlib.suppress(OSError):  # the listing's own descriptor, gone by now
            info = os.fstat(fd)
            found[fd] = (info.st_dev, info.st_ino)
    return found


def _become_child(parent: int | None, stdin: int, stdout: int,
                  inherited: dict[int, tuple[int, int]], mask: set[int | signal.Signals],
                  name: str) -> None:
    """The child's clean slate (module docstring), signals still blocked until its end;
    ``parent``: the process whose death kills it (None: none)."""
    os.setsid()
    if parent is not None:
        lifeline.die_with_parent(parent)
    lifeline.forget_inherited()
    gc.freeze()
    os.dup2(stdin, 0)
    os.dup2(stdout, 1)
    for fd, file in _open_files().items():
        if fd > 2 and inherited.get(fd) == file:
            os.close(fd)
    with contextlib.suppress(ValueError, OSError):
        signal.set_wakeup_fd(-1)
    for sig in signal.valid_signals():
        with contextlib.suppress(ValueError, OSError, TypeError):
            if callable(signal.getsignal(sig)):
                signal.signal(sig, signal.SIG_DFL)
    name_process(name)
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)


def name_process(name: str) -> None:
    """Name this process (``/proc/PID/comm``, 15 bytes at most; Linux only): ``top`` and
    ``ps -o comm`` then tell a referee process from guti and the engines."""
    if lifeline.prctl is not None:
        lifeline.prctl(_PR_SET_NAME, name.encode()[:15], 0, 0, 0)


def start_lifeline() -> None:
    """Start this process's lifeline watcher (:mod:`guti.referee.process.lifeline`) now, forked:
    a process about to start its loop and engines, so that the watcher is running before
    the first engine. Started as a new Python with the first engine instead, its 10-15 ms of
    start-up compete with the engines' own on the same CPU (a quarter of a 2-game run of
    instant engines). Nothing where this process may not fork, or has a watcher already."""
    if lifeline.has_watcher() or not can_fork():
        return
    try:
        child = fork_child(functools.partial(lifeline.run_watcher, os.getpid()),
                           "guti-lifeline", die_with_parent=False)
    except OSError:
        return  # started with the first engine, then
    os.close(child.from_child)
    lifeline.adopt_watcher(child.pid, child.to_child)


async def pipe_streams(read_fd: int, write_fd: int) -> tuple[asyncio.StreamReader,
                                                              asyncio.WriteTransport]:
    """Two pipes of a link on the running loop: a reader for ``read_fd`` and a transport
    writing to ``write_fd`` (both owned from now on). Both ends of a referee link use it:
    guti with a forked child, the referee process with its standard input and output."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=2**16)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader),
                                 os.fdopen(read_fd, "rb", buffering=0))
    writer, _ = await loop.connect_write_pipe(asyncio.Protocol,
                                              os.fdopen(write_fd, "wb", buffering=0))
    return reader, writer


class ForkedProcess:
    """A :class:`ForkedChild` in guti's loop: pipes as transports, exit from a pidfd."""

    def __init__(self, pid: int, stdin: asyncio.WriteTransport,
                 stdout: asyncio.StreamReader, pidfd: int) -> None:
        self.pid = pid
        self.stdin = stdin
        self.stdout = stdout
        self.returncode: int | None = None
        self._pidfd = pidfd
        self._exited: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        asyncio.get_running_loop().add_reader(pidfd, self._reap)

    @classmethod
    async def connect(cls, child: ForkedChild) -> ForkedProcess:
        pidfd = os.pidfd_open(child.pid)
        reader, writer = await pipe_streams(child.from_child, child.to_child)
        return cls(child.pid, writer, reader, pidfd)

    def _reap(self) -> None:
        """The pidfd is readable: the child has exited; reap it, once."""
        try:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:  # reaped by someone else: its status is lost
            pid, status = self.pid, 255 << 8
        if pid == 0:
            return
        loop = asyncio.get_running_loop()
        loop.remove_reader(self._pidfd)
        os.close(self._pidfd)
        self.returncode = os.waitstatus_to_exitcode(status)
        if not self._exited.done():
            self._exited.set_result(self.returncode)

    async def wait(self) -> int:
        """The exit status once the child has exited (negative: killed by that signal)."""
        return await asyncio.shield(self._exited)
