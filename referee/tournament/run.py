"""Running a tournament: schedule -> executor -> database, PDN, standings, progress.

This module wires the parts together and owns the rules of safety:

- a game is stored in the database (one transaction) the moment it ends, and
  only then appended to the PDN file and counted in the standings;
- the schedule is written to the database when the tournament is created,
  so ``-resume`` plays exactly the scheduled games that are not stored, and
  the UNIQUE game id makes storing one twice impossible;
- the first Ctrl-C (SIGINT) stops starting games and lets the running ones
  finish (each is bounded by its time control) and be stored; a second
  Ctrl-C, SIGTERM or SIGHUP aborts them: they are not stored (an aborted
  game has no true result), every engine is killed, and the database is
  left resumable. Nothing unfinished is ever stored.
- an SPRT that reaches a bound stops the tournament the same graceful way.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from referee.game.pdn import PdnWriter
from referee.game.record import GameRecord
from referee.process.traffic_log import TrafficLog
from referee.tournament.executor import Executor
from referee.tournament.executors import cluster_executor
from referee.tournament.export import sync_pdn
from referee.tournament.scheduler import ScheduledGame, schedule
from referee.tournament.settings import TournamentSettings
from referee.tournament.standings import Standings
from referee.tournament.store import StoreError, TournamentStore


class TournamentError(Exception):
    """The tournament cannot run as asked (database mismatch, ...); one line, exit 2."""


@dataclass
class Outcome:
    """How a run ended: games stored in all, scheduled, the standings, why it stopped."""

    finished: int
    total: int
    standings: Standings
    stopped: str | None = None  # None: every scheduled game is stored
    interrupted: bool = False


def standings_from_store(
    store: TournamentStore, names: list[str], fmt: str, sprt=None
) -> Standings:
    """Standings of every stored game (streamed: memory does not grow with games)."""
    table = Standings(names, paired=True, sprt=sprt, gauntlet=fmt == "gauntlet")
    for _gid, pair_id, white, black, result, reason, fault in store.results():
        table.add(white, black, result, reason, fault, pair_id)
    return table


def open_tournament(settings: TournamentSettings, say: Callable[[str], None]) -> TournamentStore:
    """Create the tournament in its database, or reopen it for ``-resume``."""
    s = settings
    try:
        store = TournamentStore(s.db_path)
    except StoreError as exc:
        raise TournamentError(str(exc)) from None
    try:
        if store.has_tournament():
            if not s.resume:
                raise TournamentError(
                    f"{s.db_path} already holds a tournament ({store.count_finished()}/"
                    f"{store.count_scheduled()} games played): add -resume to continue it, "
                    "or give another -db"
                )
            if store.meta("fingerprint") != s.fingerprint():
                raise TournamentError(
                    f"{s.db_path} holds a different tournament (other engines, games or "
                    "settings): resume it with its own command, or give another -db"
                )
            return store
        if s.resume:
            say(f"no tournament in {s.db_path} yet: starting it")
        jobs = schedule(s.fmt, len(s.engines), s.rounds, s.games, s.game.schedule_openings())
        store.create({**s.describe(), "seed": s.seed}, s.fingerprint(), s.engines, jobs)
        return store
    except BaseException:
        store.close()
        raise


def say_plain(console: Console, text: str) -> None:
    """One line as it is (no rich markup or highlighting: engine names stay literal)."""
    console.print(text, highlight=False, markup=False)


class _Display:
    """Per-game lines, periodic standings and a live progress bar (on a terminal)."""

    def __init__(self, console: Console, settings: TournamentSettings, total: int, done: int):
        self.console = console
        self.settings = settings
        self.total = total
        self.progress: Progress | None = None
        if console.is_terminal:
            self.progress = Progress(
                TextColumn("[bold]games"),
                BarColumn(),
                MofNCompleteColumn(),
                TaskProgressColumn(),
                TextColumn("{task.fields[rate]}"),
                TimeElapsedColumn(),
                TextColumn("eta"),
                TimeRemainingColumn(),
                TextColumn("{task.fields[leader]}"),
                console=console,
                transient=True,
            )
            self.task = self.progress.add_task("games", total=total, completed=done,
                                               rate="", leader="")
        self.began = time.monotonic()
        self.played = 0

    def __enter__(self) -> _Display:
        if self.progress is not None:
            self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.progress is not None:
            self.progress.stop()

    def say(self, text: str) -> None:
        say_plain(self.console, text)

    def game(self, done: int, job: ScheduledGame, record: GameRecord, table: Standings) -> None:
        self.played += 1
        if not self.settings.quiet:
            self.say(f"Finished game {job.game_id + 1} ({done}/{self.total}): {record.summary()}")
        if self.progress is not None:
            rate = self.played / max(1e-9, time.monotonic() - self.began)
            lead = table.leader()
            leader = f"leader {lead.name} {lead.points:g}/{lead.games}" if lead else ""
            self.progress.update(self.task, completed=done, rate=f"{rate:.2f} games/s",
                                 leader=leader)
        every = self.settings.rating_interval
        if every and done % every == 0 and done < self.total:
            table.print(self.console)


async def run_tournament(settings: TournamentSettings, console: Console) -> Outcome:
    """Play every game of the tournament that is not stored yet (see module docstring)."""
    s = settings
    for path in (s.db_path, s.pdn_path, s.log_path):
        if path:  # output folders are created, like cutechess-cli does for -pgnout
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    display_say = functools.partial(say_plain, console)
    store = open_tournament(s, display_say)
    traffic = TrafficLog(s.log_path) if s.log_path else None
    writer: PdnWriter | None = None
    try:
        if s.pdn_path:
            note = sync_pdn(store, s.pdn_path)
            if note:
                display_say(note)
            writer = PdnWriter(s.pdn_path)
        names = store.engine_names()
        table = standings_from_store(store, names, s.fmt, s.sprt)
        total = store.count_scheduled()
        finished = store.count_finished()
        if finished:
            display_say(f"resuming: {finished}/{total} games already played")
        outcome = Outcome(finished, total, table)
        decided = table.sprt_state()
        if decided is not None and decided.decision:
            outcome.stopped = "SPRT already decided"
            return outcome
        if s.cluster is not None:  # played by Dask workers; Dask is imported only here
            executor = cluster_executor(s.cluster, s.engines, s.game, traffic, builds=s.builds)
        else:
            executor = Executor(s.engines, s.game, s.concurrency, traffic)
        pending: Iterator[ScheduledGame] = store.pending()
        stop = asyncio.Event()
        if finished == total:
            return outcome
        await executor.check_engines()

        def next_job() -> ScheduledGame | None:
            return next(pending, None)

        with _Display(console, s, total, finished) as display:

            def on_result(job: ScheduledGame, record: GameRecord) -> None:
                store.record_game(job, record)  # committed before anything else sees it
                outcome.finished += 1
                if writer is not None:
                    writer.write(record)
                if traffic is not None:
                    traffic.flush()
                table.add(job.white, job.black, record.result,
                          str(record.reason) if record.reason else None, record.fault, job.pair_id)
                display.game(outcome.finished, job, record, table)
                state = table.sprt_state()
                if state is not None and state.decision and not stop.is_set():
                    outcome.stopped = f"SPRT: {state.decision} accepted"
                    display.say(f"{outcome.stopped}; finishing the running games")
                    stop.set()

            await _run_with_signals(executor, next_job, on_result, stop, outcome, display.say)
        return outcome
    finally:
        if writer is not None:
            writer.close()
        if traffic is not None:
            traffic.close()
        store.close()


async def _run_with_signals(executor, next_job, on_result, stop, outcome, say) -> None:
    """Run the executor; first SIGINT = graceful stop, second SIGINT/SIGTERM/SIGHUP = abort."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None

    def on_sigint() -> None:
        if not stop.is_set():
            stop.set()
            outcome.stopped = "interrupted"
            running = len(executor.running)
            say(f"stopping: no new games; finishing {running} running game(s) "
                "(Ctrl-C again to abort them)")
        else:
            outcome.interrupted = True
            task.cancel()

    def on_term() -> None:
        outcome.stopped = "interrupted"
        outcome.interrupted = True
        task.cancel()

    installed = []
    for sig, handler in ((signal.SIGINT, on_sigint), (signal.SIGTERM, on_term),
                         (signal.SIGHUP, on_term)):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, handler)
            installed.append(sig)
    try:
        await executor.run(next_job, on_result, stop)
    except asyncio.CancelledError:
        if not outcome.interrupted:
            raise
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)
