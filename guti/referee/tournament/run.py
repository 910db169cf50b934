"""Running a tournament: format -> executor -> database, PDN, standings, events.

This module wires the parts together and owns the rules of safety:

- a game is stored in the database (one transaction) the moment it ends, and
  only then appended to the PDN file and counted in the standings (both writes wait for
  the disk in a thread of their own, :mod:`guti.referee.storage.result_writer`, while the
  other games go on);
- the schedule is written to the database when the tournament is created,
  so ``-resume`` plays exactly the scheduled games that are not stored, and
  the UNIQUE game id makes storing one twice impossible;
- the first Ctrl-C (SIGINT) stops starting games and lets the running ones
  finish (each is bounded by its time control) and be stored; a second
  Ctrl-C, SIGTERM or SIGHUP aborts them: they are not stored (an aborted
  game has no true result), every engine is killed, and the database is
  left resumable. Nothing unfinished is ever stored.
- an SPRT that reaches a bound stops the tournament the same graceful way;
- one run per file: the run locks its database and every output file it writes, by the
  file itself (:mod:`guti.referee.game.file_lock`), before anything is written; a second
  run naming one of them by any name is refused in one line.

Which games are played is the format's (:mod:`guti.referee.tournament.formats`), how they
are played the execution's (:mod:`guti.referee.execution.executor`); what happens is told
as events (:mod:`guti.referee.tournament.events`), which the command line renders.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from guti.faults import OPEN_FILE_LIMITS
from guti.referee.execution.executor import Execution, GameExecutor
from guti.referee.execution.stopping import RunControl
from guti.referee.game.file_lock import FileLocks, lock_failure
from guti.referee.game.output_paths import create_parent_dirs, remove_made_dirs
from guti.referee.process.errors import EngineStartError
from guti.referee.process.traffic_log import TrafficLog
from guti.referee.stats.sprt import DECISION_KEY, SprtState, kept_decision
from guti.referee.stats.standings import Standings
from guti.referee.storage.export import open_game_files, sync_epd, sync_pdn
from guti.referee.storage.result_writer import ResultWriter
from guti.referee.storage.sqlite_file import remove_database
from guti.referee.storage.store import StoreError, TournamentStore
from guti.referee.tournament.events import (
    EventListener,
    GameStored,
    Note,
    PlayEnded,
    PlayStarted,
    ScheduleGrew,
    Trouble,
    ignore,
)
from guti.referee.tournament.feed import FormatError, GameFeed
from guti.referee.tournament.formats import TournamentFormat, tournament_format
from guti.referee.tournament.resume_check import (
    changed_settings,
    openings_changed,
    sprt_mismatch,
)

if TYPE_CHECKING:
    from guti.referee.execution.observer import TournamentObserver
    from guti.referee.game.game_file import GameFileWriter
    from guti.referee.game.record import GameRecord
    from guti.referee.game.scheduled import ScheduledGame
    from guti.referee.stats.sprt import SprtSpec
    from guti.referee.tournament.settings import TournamentSettings


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
    store: TournamentStore, names: list[str], fmt: str, sprt: SprtSpec | None = None
) -> Standings:
    """Standings of every stored game (streamed: memory does not grow with games)."""
    table = Standings(names, sprt=sprt, gauntlet=fmt == "gauntlet")
    for _gid, pair_id, white, black, result, reason, fault in store.results():
        table.add(white, black, result, reason, fault, pair_id)
    table.sprt_decided = kept_decision(store.meta(DECISION_KEY))
    return table


def open_tournament(
    settings: TournamentSettings, say: Callable[[str], None],
    fmt: TournamentFormat | None = None,
) -> tuple[TournamentStore, bool]:
    """Create the tournament in its database (with the games its format schedules at
    once), or reopen it for ``-resume``; whether it was created now."""
    s = settings
    try:
        store = TournamentStore(s.db_path)
    except StoreError as exc:
        if exc.machine_fault:  # a full disk: the machine's fault, said as such
            raise
        raise TournamentError(str(exc)) from None
    try:
        if store.has_tournament():
            store.check()  # a damaged database is one line now, not a traceback mid-run
            stored = store.settings()
            if stored.get("format") == "tune":
                raise TournamentError(f"{s.db_path} holds a tuning run (guti tune), not a "
                                      "tournament: give another -db")
            if not s.resume:
                raise TournamentError(
                    f"{s.db_path} already holds a tournament ({store.count_finished()}/"
                    f"{store.count_scheduled()} games played): add -resume to continue it, "
                    "or give another -db"
                )
            if store.meta("fingerprint") != s.fingerprint():
                raise TournamentError(
                    f"{s.db_path} holds a different tournament ({changed_settings(stored, s)}): "
                    "resume it with its own command, or give another -db"
                )
            refusal = sprt_mismatch(stored, s) or openings_changed(stored, s)
            if refusal is not None:
                raise TournamentError(refusal)
            wanted = (fmt or tournament_format(s)).scheduled_games()
            held = store.count_scheduled()
            if wanted is not None and held != wanted:  # rows taken out or added
                raise TournamentError(
                    f"{s.db_path}: its schedule holds {held:,} games where this tournament "
                    f"has {wanted:,}: the database was changed outside guti")
            return store, False
        if s.openings_from_store:  # the tournament went while this run started
            raise TournamentError(f"{s.db_path}: its tournament is gone; start it anew")
        if s.resume:
            say(f"no tournament in {s.db_path} yet: starting it")
        jobs = (fmt or tournament_format(s)).schedule()
        store.create({**s.describe(), "seed": s.seed}, s.fingerprint(), s.engines, jobs)
        return store, True
    except BaseException:
        store.close()
        raise


async def run_tournament(
    settings: TournamentSettings,
    listener: EventListener = ignore,
    control: RunControl | None = None,
    observer: TournamentObserver | None = None,
    execution: Execution | None = None,
) -> Outcome:
    """Play every game of the tournament that is not stored yet (see module docstring),
    telling ``listener`` what happens. The signals are handled
    (:meth:`RunControl.signals`) from start to end; ``observer`` (the live page) hears of
    every move and every stored game; ``execution``: the way to play the games, readied
    before the loop began (:func:`~guti.referee.execution.executor.prepared`; default:
    the settings' plan, readied now)."""
    s = settings
    control = control or RunControl()
    execution = execution or Execution(s.execution_plan())
    made: list[str] = []  # output folders are created, as cutechess-cli does for -pgnout
    try:
        for _what, path in run_files(s):
            if path:
                made += create_parent_dirs(path)
    except OSError:
        remove_made_dirs(made)
        raise
    run = _Run(listener, control, observer, [])
    with control.signals(run.say, lambda: sum(len(e.running) for e in run.running)):
        locks = FileLocks()
        try:
            locks.acquire(run_files(s))
        except OSError as exc:  # FileBusy included: one line naming the file
            remove_made_dirs(made)
            if exc.errno in OPEN_FILE_LIMITS:  # the machine's limit, exit 1
                raise
            raise TournamentError(lock_failure(exc)) from None
        refused = True
        try:
            outcome = await _open_and_play(s, run, execution)
            refused = False
            if control.aborted and not outcome.interrupted:  # with nothing left to play
                outcome.stopped, outcome.interrupted = control.reason, True
            return outcome
        finally:  # the report, held from the start, is written after the run (or not)
            locks.release(discard_created=refused, discard=[s.report_path or ""])
            if refused:
                remove_made_dirs(made)


def run_files(s: TournamentSettings) -> list[tuple[str, str | None]]:
    """The files a run writes, each locked for the run: its database, ``-pdnout``,
    ``-epdout``, ``-log``, ``-report`` (written at the end, but known to be writable and
    its own from the start) and the engines' ``stderr=`` files (not on a cluster: those are
    the workers' files, on their machines)."""
    stderr = [] if s.cluster is not None else [("stderr", c.stderr_path) for c in s.engines]
    return [("-db", s.db_path), ("-pdnout", s.pdn_path), ("-epdout", s.records.epd_path),
            ("-log", s.log_path), ("-report", s.report_path), *stderr]


@dataclass
class _Run:
    """What every step of one run tells and answers to."""

    listener: EventListener
    control: RunControl
    observer: TournamentObserver | None
    running: list[GameExecutor]

    def say(self, text: str) -> None:
        self.listener(Note(text))

    def warn(self, text: str) -> None:
        self.listener(Trouble(text))


async def _open_and_play(s: TournamentSettings, run: _Run, execution: Execution) -> Outcome:
    """The locked part of a run: open the database, bring the PDN in line, play. A
    tournament created by this run that fails before its first game is stored (an engine
    that cannot start, say) is removed again: the corrected command starts it afresh."""
    fmt = tournament_format(s)
    store, created = open_tournament(s, run.say, fmt)
    traffic = TrafficLog(s.log_path) if s.log_path else None
    writers: list[GameFileWriter] = []
    results: ResultWriter | None = None
    discard = False
    try:
        writers = _open_writers(s, store, run.say)
        results = ResultWriter(store, writers)
        feed = _feed(s, fmt, store, run.say)
        table = standings_from_store(store, store.engine_names(), s.fmt, s.sprt)
        outcome = Outcome(store.count_finished(), store.count_scheduled(), table)
        if outcome.finished:
            run.say(f"resuming: {outcome.finished}/{outcome.total} games already played")
        decided = table.sprt_state()
        if decided is not None and decided.decision:
            outcome.stopped = "SPRT already decided"
            return outcome
        if outcome.finished == outcome.total:
            return outcome
        executor = execution.open(run.warn, run.say, traffic, run.observer)
        run.running.append(executor)
        await _play(s, executor, results, traffic, outcome, run, feed)
        for line in feed.overview():
            run.say(line)
        return outcome
    except Exception:
        discard = created and not store.in_memory and store.count_finished() == 0
        raise
    finally:
        if results is not None:
            results.close()
        for writer in writers:
            writer.close()
        if traffic is not None:
            traffic.close()
        store.close()
        if discard:
            remove_database(s.db_path)


async def _keep_decision(results: ResultWriter, table: Standings, state: SprtState) -> None:
    """Keep the SPRT's decision as taken, in the table and in the database (after the
    game that decided it): the standings, the report, the live page and a resume then
    show it, not the LLR that the games still running at the stop move (a finished
    fishtest test stays finished too). Not kept in the database when the disk will not
    take it: the games are what matter, and they are stored."""
    table.sprt_decided = state
    with contextlib.suppress(StoreError):
        await results.keep_meta(DECISION_KEY, json.dumps(state.to_json()))


def _feed(s: TournamentSettings, fmt: TournamentFormat, store: TournamentStore,
          say: Callable[[str], None]) -> GameFeed:
    """The run's games, from its format (a knockout's bracket rebuilt from the database,
    whatever a kill left unscheduled scheduled now); its overview told."""
    try:
        feed = fmt.feed(store)
    except FormatError as exc:
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
    return open_game_files(s.pdn_path, s.records.pdn_fields, s.records.epd_path)


async def _play(
    settings: TournamentSettings,
    executor: GameExecutor,
    results: ResultWriter,
    traffic: TrafficLog | None,
    outcome: Outcome,
    run: _Run,
    feed: GameFeed,
) -> None:
    """Check the engines start, then play the games the ``feed`` gives, storing each as it
    ends (a feed that follows results schedules more as they come)."""
    control, table = run.control, outcome.standings
    try:
        # nothing runs yet: a graceful stop (one Ctrl-C) cuts the check short as well
        await control.unless_aborted(executor.check_engines(), or_stopped=True)
    except EngineStartError:
        if not control.stopping:
            raise
        # stopped while the engines started (a Ctrl-C reaches a local cluster's workers
        # as they start, too): the failure is the stop's, and nothing is to be played
        outcome.stopped = control.reason
        return
    finally:
        if control.stopping:  # aborted, or stopped before the first game: none is played
            if control.aborted:
                executor.kill_all()
            await executor.close()
    if control.stopping:
        outcome.stopped, outcome.interrupted = control.reason, control.aborted
        return

    async def on_result(job: ScheduledGame, record: GameRecord) -> None:
        for note in record.notes:  # what the referee met in the game, told first
            run.warn(f"guti: {note}")
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
        run.listener(GameStored(job, record, outcome.finished, outcome.total, table))
        if run.observer is not None:
            run.observer.finished(job, record)
        _advance(feed, job, record, outcome, run)
        state = table.sprt_state()
        if state is not None and state.decision and table.sprt_decided is None:
            await _keep_decision(results, table, state)
            if control.stop(f"SPRT: {state.decision} accepted"):
                outcome.stopped = control.reason
                run.say(f"{outcome.stopped}; finishing the running games")

    # a slot goes on to its next game while the last one is stored, unless a result
    # can change what is played next: a knockout's bracket, an SPRT's decision
    follows = feed.follows_results
    run.listener(PlayStarted(outcome.finished, outcome.total))
    try:
        await executor.run(feed.next_job, on_result, control,
                           games=None if follows else outcome.total - outcome.finished,
                           ahead=not follows and settings.sprt is None)
    finally:
        run.listener(PlayEnded())
    if control.stopping and outcome.stopped is None:
        outcome.stopped = control.reason
    outcome.interrupted = control.aborted


def _advance(feed: GameFeed, job: ScheduledGame, record: GameRecord, outcome: Outcome,
             run: _Run) -> None:
    """A stored game moves the feed on (a knockout's bracket): say what it decided, count
    the games it scheduled. Scheduling that cannot be stored aborts like a game that
    cannot (``-resume`` schedules them again)."""
    try:
        said, added = feed.stored(job, record.result)
    except (StoreError, FormatError) as exc:
        outcome.failed = (f"{exc}; every game stored so far is safe, and -resume continues "
                          "the tournament")
        run.control.abort()
        return
    if added:
        outcome.total += added
        run.listener(ScheduleGrew(added, outcome.total))
    for line in said:
        run.say(line)
