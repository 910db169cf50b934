"""A referee process of ``-referees N``: plays the games guti hands it, on its own CPU.

Why: with engines that answer in microseconds the referee's own work per ply (reading,
judging, writing) is what limits games per second, and one Python process is one core.
N referee processes referee N shares of the game slots at once; with ``-use-affinity``
each is pinned, with the engines it starts, to its slots' CPUs, so that a ply's hand-over
between engine and referee never crosses cores.

Started by :class:`~guti.referee.execution.referee_pool.RefereePool` as ``python -m
guti.referee.execution.referee_child``, in a session of its own (Ctrl-C at the terminal
reaches guti alone, which decides) and with the kernel told to kill it when guti dies
(the process named in :data:`PARENT_VARIABLE`: the child asks for that itself, first).
Standard input brings guti's messages and file descriptor 1 takes the answers
(:mod:`guti.referee.execution.referee_link`); anything printed goes to standard error.

Games are played as everywhere else: a :class:`~guti.referee.execution.remote_games.WorkerRun`
keeps the engines warm in pools and plays each game with
:func:`~guti.referee.execution.pairing.play_job`; each is its own task, so a ``cancel`` or an
``abort`` is heard while games run. End of input (guti closed the link, or died) kills
every running game's engines and quits the others, then the process exits.
"""

from __future__ import annotations

import asyncio
import os
import resource
import signal
import sys
import traceback
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from guti.referee.execution.referee_link import Message, frame, read_message
from guti.referee.execution.remote_games import WorkerRun
from guti.referee.process import lifeline
from guti.referee.process.affinity import pin_process_tree
from guti.referee.process.event_loop import run
from guti.referee.process.forked import name_process, pipe_streams, start_lifeline

if TYPE_CHECKING:
    from guti.referee.game.scheduled import ScheduledGame

#: The environment variable naming, in a referee process started as a new interpreter, the
#: process it must die with (taken out of the environment, so its engines never see it).
PARENT_VARIABLE = "GUTI_REFEREE_PARENT"


class RefereeChild:
    """One referee process's side of the link: its run, its games in play, its answers."""

    def __init__(self, writer: asyncio.WriteTransport) -> None:
        self.writer = writer
        self.run: WorkerRun | None = None
        self.name = "referee"
        self.games: dict[int, asyncio.Task[None]] = {}
        self.started_cpu = 0.0  # CPU seconds spent before the run came (interpreter, imports)

    def send(self, message: Message) -> None:
        if not self.writer.is_closing():
            self.writer.write(frame(message))

    def handle(self, message: Message) -> bool:
        """Act on one message from guti; False once it said ``close``."""
        kind = message[0]
        if kind == "setup":
            self.started_cpu = _cpu_seconds()
            spec, self.name, cpus = message[1], message[2], message[3]
            if cpus:  # every thread (one started before this would spawn engines unpinned)
                pin_process_tree(os.getpid(), cpus)  # the engines it starts inherit these CPUs
            self.run = WorkerRun(spec)
        elif kind == "check":
            self._spawn(-1, self._check())
        elif kind == "play":
            job: ScheduledGame = message[1]
            self._spawn(job.game_id, self._play(job))
        elif kind == "cancel":
            task = self.games.get(message[1])
            if task is not None:
                task.cancel()  # play_job kills the game's engines
        elif kind == "abort" and self.run is not None:
            self.run.abort()
        elif kind == "close":
            return False
        return True

    def _spawn(self, key: int, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(work)
        self.games[key] = task

        def forget(_: object) -> None:
            if self.games.get(key) is task:  # not a later task under the same key
                del self.games[key]

        task.add_done_callback(forget)

    async def _check(self) -> None:
        assert self.run is not None
        try:
            errors = await self.run.check()
        except Exception as exc:  # noqa: BLE001 - reported to guti, which stops the run
            errors = [f"{self.name}: {type(exc).__name__}: {exc}"]
        self.send(("checked", errors[0] if errors else ""))

    async def _play(self, job: ScheduledGame) -> None:
        run = self.run
        assert run is not None
        try:
            outcome = await run.play(job, self.name)
        except asyncio.CancelledError:
            raise  # cancelled or aborted by guti: nothing to report
        except Exception:  # noqa: BLE001 - a bug: guti stops the run and shows it
            self.send(("failed", job.game_id, traceback.format_exc(limit=8)))
            return
        if outcome.record is not None:  # None: aborted before it began; nothing to report
            self.send(("result", outcome))

    async def finish(self, aborted: bool) -> None:
        """Kill (``aborted``) or let finish nothing: cancel what runs, quit every engine."""
        run = self.run
        if run is not None:
            if aborted:
                run.abort()
            for task in list(self.games.values()):
                task.cancel()
            await asyncio.gather(*self.games.values(), return_exceptions=True)
            await run.close()
        self.send(("closed", _cpu_seconds() - self.started_cpu, self.started_cpu))


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def serve(out_fd: int) -> None:
    """Read guti's messages until ``close`` or end of input; then clean up and answer."""
    reader, writer = await pipe_streams(0, out_fd)
    child = RefereeChild(writer)
    while True:
        message = await read_message(reader)
        if message is None:  # guti is gone, or closed the link: no game of this run is kept
            await child.finish(aborted=True)
            break
        if not child.handle(message):
            await child.finish(aborted=False)
            break
    for _ in range(1000):  # the last answers out before the loop closes (at most 1 s)
        if writer.get_write_buffer_size() == 0:
            break
        await asyncio.sleep(0.001)
    writer.close()


def main() -> int:
    """Serve the link on standard input and output: in a new interpreter (``python -m``),
    or in a child forked from guti (:func:`guti.referee.execution.referee_pool.fork_referees`),
    whose file descriptors 0 and 1 are the link's too."""
    parent = os.environ.pop(PARENT_VARIABLE, "")
    if parent.isdigit():  # a new interpreter: it dies with the process that started it
        lifeline.die_with_parent(int(parent))
    name_process("guti-referee")
    start_lifeline()  # before the loop: the watcher of its engines, forked, ready at once
    out_fd = os.dup(1)
    os.dup2(2, 1)  # print() and stray writes go to stderr, never into the link
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # guti decides what Ctrl-C does
    run(serve(out_fd))
    return 0


if __name__ == "__main__":
    status = main()
    # Everything is said and every engine gone: the interpreter's own teardown (tens of
    # milliseconds of freeing modules) would only keep guti waiting at the end of a run.
    sys.stdout.flush()
    sys.stderr.flush()
    lifeline.stop_watcher()
    os._exit(status)
