"""Running a tournament: schedule -> executor -> database, PDN, standings, progress.

This module wires the parts together and owns the rules of safety:

- a game is stored in the database (one transaction) the moment it ends, and
  only then appended to the PDN file and counted in the standings (both writes wait for
  the disk in a thread of their own, :mod:`guti.referee.tournament.result_writer`, while the
  other games go on);
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

import functools
import os
import time
from collections.abc import Callable, Iterator, Sequence
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

from guti.referee.game.game_file import GameFileWriter
from guti.referee.game.latency import latency_lines
from guti.referee.game.record import GameRecord
from guti.referee.process.forked import ForkedChild
from guti.referee.process.text import visible
from guti.referee.process.traffic_log import TrafficLog
from guti.referee.tournament.db_lock import DatabaseBusy, DatabaseLock
from guti.referee.tournament.executor import Executor, GameSlots
from guti.referee.tournament.executors import cluster_executor
from guti.referee.tournament.export import open_game_files, sync_epd, sync_pdn
from guti.referee.tournament.knockout import BracketError
from guti.referee.tournament.knockout_feed import KnockoutFeed
from guti.referee.tournament.observer import TournamentObserver
from guti.referee.tournament.referee_pool import RefereePool, referee_count
from guti.referee.tournament.result_writer import ResultWriter
from guti.referee.tournament.scheduler import ScheduledGame, schedule
from guti.referee.tournament.settings import TournamentSettings
from guti.referee.tournament.standings import Standings
from guti.referee.tournament.stopping import RunControl
from guti.referee.tournament.store import StoreError, TournamentStore


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
    failed: str | None = None  # storage failed: one line saying what was lost


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
        jobs = ([] if s.knockout  # scheduled as it advances (KnockoutFeed)
                else schedule(s.fmt, len(s.engines), s.rounds, s.games, s.game.schedule_openings(),
                              seeds=s.seeds, noswap=s.scheduling.noswap,
                              reverse=s.scheduling.reverse))
        store.create({**s.describe(), "seed": s.seed}, s.fingerprint(), s.engines, jobs)
        return store
    except BaseException:
        store.close()
        raise


def say_plain(console: Console, text: str) -> None:
    """One line, never wrapped, control characters escaped, no rich markup or highlighting
    (engine names stay literal)."""
    console.print(visible(text), highlight=False, markup=False, soft_wrap=True)


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
                TextColumn("{task.fields[leader]}", markup=False),
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

    def grow(self, games: int) -> None:
        """More games to play than planned (a knockout's next round or tie-break)."""
        self.total += games
        if self.progress is not None:
            self.progress.update(self.task, total=self.total)

    def game(self, done: int, job: ScheduledGame, record: GameRecord, table: Standings) -> None:
        self.played += 1
        if not self.settings.quiet:
            self.say(f"Finished game {job.game_id + 1} ({done}/{self.total}): {record.summary()}")
        if self.settings.records.show_latency:
            for line in latency_lines(record):
                self.say(line)
        if self.progress is not None:
            rate = self.played / max(1e-9, time.monotonic() - self.began)
            lead = table.leader()
            leader = f"leader {visible(lead.name)} {lead.points:g}/{lead.games}" if lead else ""
            self.progress.update(self.task, completed=done, rate=f"{rate:.2f} games/s",
                                 leader=leader)
        every = self.settings.rating_interval
        if every and done % every == 0 and done < self.total:
            table.print(self.console)


def referee_processes(settings: TournamentSettings) -> int:
    """How many referee processes a run of ``settings`` starts (0: it referees every game in
    this process, or on a cluster): what to fork before its loop begins
    (:func:`~guti.referee.tournament.referee_pool.fork_referees`)."""
    if settings.referees <= 1 or settings.cluster is not None:
        return 0
    return referee_count(settings.referees, settings.concurrency)


async def run_tournament(
    settings: TournamentSettings,
    console: Console,
    control: RunControl | None = None,
    observer: TournamentObserver | None = None,
    forked: Sequence[ForkedChild] = (),
) -> Outcome:
    """Play every game of the tournament that is not stored yet (see module docstring).
    The signals are handled (:meth:`RunControl.signals`) from start to end; ``observer``
    (the live page) hears of every move and every stored game; ``forked``: referee processes
    forked for ``-referees`` before the loop began (:func:`referee_processes`)."""
    s = settings
    control = control or RunControl()
    for path in (s.db_path, s.pdn_path, s.log_path, s.records.epd_path):
        if path:  # output folders are created, like cutechess-cli does for -pgnout
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    display_say = functools.partial(say_plain, console)
    running: list[GameSlots] = []
    with control.signals(display_say, lambda: sum(len(e.running) for e in running)):
        try:
            lock = DatabaseLock(s.db_path)
            lock.acquire()
        except DatabaseBusy as exc:
            raise TournamentError(str(exc)) from None
        try:
            return await _open_and_play(s, console, control, running, observer, forked)
        finally:
            lock.release()


async def _open_and_play(
    s: TournamentSettings,
    console: Console,
    control: RunControl,
    running: list[GameSlots],
    observer: TournamentObserver | None,
    forked: Sequence[ForkedChild] = (),
) -> Outcome:
    """The locked part of a run: open the database, bring the PDN in line, play
    (``-referees`` with the referee processes ``forked`` before the loop, if any)."""
    display_say = functools.partial(say_plain, console)
    store = open_tournament(s, display_say)
    traffic = TrafficLog(s.log_path) if s.log_path else None
    writers: list[GameFileWriter] = []
    results: ResultWriter | None = None
    try:
        writers = _open_writers(s, store, display_say)
        results = ResultWriter(store, writers)
        feed = _knockout_feed(s, store, display_say)
        table = standings_from_store(store, store.engine_names(), s.fmt, s.sprt)
        outcome = Outcome(store.count_finished(), store.count_scheduled(), table)
        if outcome.finished:
            display_say(f"resuming: {outcome.finished}/{outcome.total} games already played")
        decided = table.sprt_state()
        if decided is not None and decided.decision:
            outcome.stopped = "SPRT already decided"
            return outcome
        if outcome.finished == outcome.total:
            return outcome
        executor: GameSlots
        if s.cluster is not None:  # played by Dask workers; Dask is imported only here
            executor = cluster_executor(s.cluster, s.engines, s.game, traffic, setups=s.setups)
        elif referee_processes(s):
            executor = RefereePool(s.engines, s.game, s.concurrency, s.referees, traffic,
                                   observer=observer, wait_ms=s.scheduling.wait_ms,
                                   cpus=s.scheduling.cpus, forked=forked)
        else:
            executor = Executor(s.engines, s.game, s.concurrency, traffic, observer=observer,
                                wait_ms=s.scheduling.wait_ms, cpus=s.scheduling.cpus)
        running.append(executor)
        await _play(s, executor, store, results, traffic, outcome, control, console, observer,
                    feed)
        if feed is not None:
            for line in feed.overview():
                display_say(line)
        return outcome
    finally:
        if results is not None:
            results.close()
        for writer in writers:
            writer.close()
        if traffic is not None:
            traffic.close()
        store.close()


def _knockout_feed(
    s: TournamentSettings, store: TournamentStore, say: Callable[[str], None]
) -> KnockoutFeed | None:
    """A knockout's feed (its bracket rebuilt from the database, whatever a kill left
    unscheduled scheduled now), its bracket printed; None for other formats."""
    if not s.knockout:
        return None
    try:
        feed = KnockoutFeed(store, s.games, s.tiebreak, s.game.schedule_openings())
    except BracketError as exc:
        raise TournamentError(f"{s.db_path}: {exc}") from None
    for line in feed.overview():
        say(line)
    return feed


def _open_writers(
    s: TournamentSettings, store: TournamentStore, say: Callable[[str], None]
) -> list[GameFileWriter]:
    """The per-game files (``-pdnout``, ``-epdout``), each first made to hold exactly the
    database's games (a resume after a kill), then opened for appending."""
    syncs = [(s.pdn_path, lambda path: sync_pdn(store, path, s.records.pdn_fields)),
             (s.records.epd_path, lambda path: sync_epd(store, path))]
    for path, sync in syncs:
        note = sync(path) if path else None
        if note:
            say(note)
    return open_game_files(s.pdn_path, s.records)


async def _play(
    settings: TournamentSettings,
    executor: GameSlots,
    store: TournamentStore,
    results: ResultWriter,
    traffic: TrafficLog | None,
    outcome: Outcome,
    control: RunControl,
    console: Console,
    observer: TournamentObserver | None = None,
    feed: KnockoutFeed | None = None,
) -> None:
    """Check the engines start, then play the pending games, storing each as it ends
    (a knockout's games come from its ``feed``, which schedules more as results come)."""
    table = outcome.standings
    pending: Iterator[ScheduledGame] = store.pending()
    next_job = feed.next_job if feed is not None else lambda: next(pending, None)
    try:
        await control.unless_aborted(executor.check_engines())
    finally:
        if control.aborted:
            executor.kill_all()
            await executor.close()
    if control.aborted:
        outcome.stopped, outcome.interrupted = "interrupted", True
        return

    with _Display(console, settings, outcome.total, outcome.finished) as display:

        async def on_result(job: ScheduledGame, record: GameRecord) -> None:
            # committed, then appended to the PDN, before it counts anywhere; a storage
            # failure stops the run at once (abort: the running games cannot be stored
            # either) with one line saying what is lost and what is safe
            stored = await results.store(job, record)
            outcome.finished += stored.in_database
            if stored.failed is not None:
                outcome.failed = outcome.failed or stored.failed  # the first failure is reported
                control.abort()
                return
            if traffic is not None:
                traffic.flush()
            table.add(job.white, job.black, record.result,
                      str(record.reason) if record.reason else None, record.fault, job.pair_id)
            display.game(outcome.finished, job, record, table)
            if observer is not None:
                observer.finished(job, record)
            if feed is not None:
                _advance(feed, job, record, outcome, control, display)
            state = table.sprt_state()
            if state is not None and state.decision and control.stop(
                f"SPRT: {state.decision} accepted"
            ):
                outcome.stopped = control.reason
                display.say(f"{outcome.stopped}; finishing the running games")

        # a slot goes on to its next game while the last one is stored, unless a result
        # can change what is played next: a knockout's bracket, an SPRT's decision
        ahead = feed is None and settings.sprt is None
        await executor.run(next_job, on_result, control,
                           games=None if feed is not None else outcome.total - outcome.finished,
                           ahead=ahead)
    if control.stopping and outcome.stopped is None:
        outcome.stopped = control.reason
    outcome.interrupted = control.aborted


def _advance(feed: KnockoutFeed, job: ScheduledGame, record: GameRecord, outcome: Outcome,
             control: RunControl, display: _Display) -> None:
    """A stored knockout game moves the bracket on: say what it decided, count the games
    it scheduled. Scheduling that cannot be stored aborts like a game that cannot
    (``-resume`` schedules them again)."""
    try:
        said, added = feed.stored(job, record.result)
    except (StoreError, BracketError) as exc:
        outcome.failed = (f"{exc}; every game stored so far is safe, and -resume continues "
                          "the knockout")
        control.abort()
        return
    outcome.total += added
    display.grow(added)
    for line in said:
        display.say(line)
