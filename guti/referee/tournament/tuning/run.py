"""Running a tuning run: iterations -> game slots -> database -> SPSA state, told as events.

The safety rules are the tournament's (:mod:`guti.referee.tournament.run`): every game is
written to the database the moment it ends, in its own transaction, and only then counts;
the whole schedule is written when the run is created, so ``-resume`` plays exactly the
games not stored; the signals stop or abort the run the same way. The tuning's state is
rebuilt from the stored results (:mod:`~guti.referee.tournament.tuning.state`), so a run
killed at any moment and resumed ends with the values of an uninterrupted one.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from guti.referee.execution.cluster_address import dask_missing
from guti.referee.execution.stopping import RunControl
from guti.referee.game.file_lock import FileLocks, lock_failure
from guti.referee.storage.errors import DatabaseGone, StoreError
from guti.referee.storage.store import TournamentStore
from guti.referee.tournament.resume_check import as_stored
from guti.referee.tournament.tuning.executor import ConfigFor, TuneExecutor, TuneSlots
from guti.referee.tournament.tuning.settings import PLUS, TuneSettings
from guti.referee.tournament.tuning.spsa import Param, exact_text
from guti.referee.tournament.tuning.state import TuneState, plus_score, replay_results
from guti.referee.ugi.options import EngineOption, listed

if TYPE_CHECKING:
    from guti.referee.game.engine_config import EngineConfig
    from guti.referee.game.record import GameRecord
    from guti.referee.game.scheduled import ScheduledGame


class TuneError(Exception):
    """The tuning cannot run as asked (a parameter the engine does not take, a database
    that holds something else, ...); one line, exit 2."""


@dataclass(frozen=True)
class IterationDone:
    """Iteration ``iteration`` (0-based) moved the values to ``theta``."""

    iteration: int
    theta: tuple[float, ...]
    finished: int
    total: int


@dataclass
class TuneListener:
    """Who hears what a run does: lines to tell, every applied iteration, and lines
    about trouble (a stop, the cluster's workers; ``say`` when not given), which a
    tournament's listener also hears apart."""

    say: Callable[[str], None] = lambda text: None
    iteration: Callable[[IterationDone], None] = lambda done: None
    trouble: Callable[[str], None] | None = None


@dataclass
class TuneOutcome:
    """How a run ended: the values, games stored of all, whether it was interrupted."""

    theta: tuple[float, ...]
    finished: int
    total: int
    history: list[tuple[float, ...]] = field(default_factory=list)
    interrupted: bool = False
    failed: str | None = None
    rounded: frozenset[str] = frozenset()  # the options sent as whole numbers


def check_params(params: tuple[Param, ...], declared: dict[str, EngineOption],
                 engine: str) -> frozenset[str]:
    """Every parameter against the options the engine declared: it must declare it as a
    spin (whole numbers, sent rounded) or string option (numbers sent as they are), and a
    spin's range must hold MIN..MAX. Returns the names sent rounded."""
    rounded = set()
    for p in params:
        option = declared.get(p.name) or declared.get(p.name.lower())
        if option is None:
            known = listed(sorted(o.name for o in declared.values()))
            raise TuneError(f"-param {p.name}: {engine} declares no option {p.name!r} "
                            f"(its options: {known})")
        if option.type == "spin":
            try:
                low, high = int(option.min or ""), int(option.max or "")
            except ValueError:
                raise TuneError(f"-param {p.name}: {engine} declares it without a whole-number "
                                "min and max") from None
            if low > high:
                raise TuneError(f"-param {p.name}: {engine} declares an empty range, "
                                f"min {low} above max {high}")
            if p.minimum < low or p.maximum > high:
                raise TuneError(f"-param {p.name}: range {p.minimum:g}..{p.maximum:g} is wider "
                                f"than the {low}..{high} {engine} declares")
            if p.c_end <= 0.5:  # theta +- c, two values at most 1 apart, may round alike
                raise TuneError(f"-param {p.name}: C_END {p.c_end:g} is not above 0.5, and "
                                f"{engine} takes whole numbers for it: both sides of a game "
                                "pair could play the same value")
            rounded.add(p.name)
        elif option.type != "string":
            raise TuneError(f"-param {p.name}: {engine} declares it as a {option.type} option; "
                            "only spin and string options can be tuned")
    return frozenset(rounded)


def option_text(value: float, rounded: bool) -> str:
    """A value as sent to the engine: whole-number options rounded, any other written
    exactly, as a plain decimal (:func:`~guti.referee.tournament.tuning.spsa.exact_text`)."""
    return str(round(value)) if rounded else exact_text(value)


def tuned_options(params: tuple[Param, ...], theta: tuple[float, ...],
                  rounded: frozenset[str]) -> dict[str, str]:
    """The values as ``setoption`` sends them, by option name."""
    return {p.name: option_text(t, p.name in rounded) for p, t in zip(params, theta, strict=True)}


def open_tuning(s: TuneSettings, say: Callable[[str], None]) -> TournamentStore:
    """Create the run in its database (settings, both sides, every game), or reopen it for
    ``-resume``."""
    try:
        store = TournamentStore(s.db_path)
    except StoreError as exc:
        if exc.machine_fault:  # a full disk: the machine's fault, said as such
            raise
        raise TuneError(str(exc)) from None
    try:
        if store.has_tournament():
            store.check()  # a damaged database is one line, not a traceback
            if "tune" not in store.settings():  # (its settings then checked as a run's)
                raise TuneError(f"{s.db_path} holds a tournament, not a tuning run: "
                                "give another -db")
            if not s.resume:
                raise TuneError(f"{s.db_path} already holds a run ({store.count_finished()}/"
                                f"{store.count_scheduled()} games played): add -resume to "
                                "continue it, or give another -db")
            try:
                s.adopt(store.settings())
            except ValueError as exc:
                raise TuneError(f"{s.db_path} is damaged: {exc}") from None
            if store.meta("fingerprint") != s.fingerprint():
                raise TuneError(f"{s.db_path} holds a different run "
                                f"({_changed(store.settings(), s.describe())}): resume it with "
                                "its own command, or give another -db")
            return store
        if s.resume:
            say(f"no tuning run in {s.db_path} yet: starting it")
        plus, minus = s.side_names()
        sides = [replace(s.engine, name=plus), replace(s.engine, name=minus)]
        store.create(s.describe(), s.fingerprint(), sides, s.schedule())
        return store
    except BaseException:
        store.close()
        raise


def _changed(stored: dict[str, Any], given: dict[str, Any]) -> str:
    """Which of a run's stored settings this run's differ in (``other params``); the
    openings are not compared (a resume plays the stored schedule's)."""

    def flat(settings: dict[str, Any]) -> dict[str, Any]:
        """The settings with those of ``tune`` (params, iterations, ...) beside the rest."""
        tune = settings.get("tune")
        return {**{k: v for k, v in settings.items() if k not in ("tune", "openings")},
                **(tune if isinstance(tune, dict) else {})}

    parts, held = flat(as_stored(given)), flat(stored)
    keys = [k for k in sorted(parts.keys() | held.keys()) if parts.get(k) != held.get(k)]
    return "other " + ", ".join(keys) if keys else "other engine, parameters or settings"


def replay(s: TuneSettings, store: TournamentStore) -> TuneState:
    """The state the stored results make (in any order: updates apply in iteration order)."""
    return replay_results(s.spsa(), s.games_per_iteration, s.lag, store.results(), PLUS)


class _Feed:
    """The games not stored yet, in schedule order; a game whose iteration still waits for
    earlier ones is held back (None) until they are applied."""

    def __init__(self, store: TournamentStore, state: TuneState, per_iteration: int) -> None:
        self.pending = store.pending()
        self.state = state
        self.per_iteration = per_iteration
        self.held: ScheduledGame | None = None

    def next_job(self) -> ScheduledGame | None:
        job = self.held if self.held is not None else next(self.pending, None)
        self.held = None
        if job is not None and not self.state.ready(job.game_id // self.per_iteration):
            self.held, job = job, None
        return job


def _executor(s: TuneSettings, config_for: ConfigFor, say: Callable[[str], None],
              tell: Callable[[str], None]) -> TuneExecutor:
    """Game slots here, or the cluster's (Dask imported only then), which tells ``tell``
    where it plays and ``say`` of its workers' trouble."""
    if s.cluster is None:
        return TuneSlots(s.engine, config_for, s.game, s.games_per_iteration, s.concurrency)
    try:
        from guti.referee.tournament.tuning.cluster import TuneCluster
    except ImportError as exc:
        raise dask_missing(s.cluster, exc) from None
    return TuneCluster(s.cluster, s.engine, config_for, s.game, s.games_per_iteration, say,
                       tell, s.setups)


class _Values:
    """What an iteration's engines are made from: the state (once the database is read)
    and the options sent as whole numbers (once the engine has declared them)."""

    def __init__(self, s: TuneSettings) -> None:
        self.s = s
        self.state: TuneState | None = None
        self.rounded: frozenset[str] = frozenset()

    def config_for(self, k: int, side: int) -> EngineConfig:
        """The engine as side ``side`` of iteration ``k`` plays it."""
        s, state = self.s, self.state
        if state is None:
            raise RuntimeError("no game is played before the database is read")
        trial = state.trial(k)
        values = trial.plus if side == PLUS else trial.minus
        options = {**s.engine.options, **tuned_options(s.params, values, self.rounded)}
        return replace(s.engine, name=s.side_names()[side], options=options)


async def run_tune(s: TuneSettings, listener: TuneListener | None = None,
                   control: RunControl | None = None) -> TuneOutcome:
    """Play every game of the run not stored yet, applying each iteration as its games end
    (see the module docstring). The engine is started and the parameters checked against
    it before the database is touched: a mistake leaves no run behind."""
    listener = listener or TuneListener()
    control = control or RunControl()
    os.makedirs(os.path.dirname(os.path.abspath(s.db_path)), exist_ok=True)
    values = _Values(s)
    trouble = listener.trouble or listener.say
    executor = _executor(s, values.config_for, trouble, listener.say)
    with control.signals(trouble, lambda: len(executor.running)):
        locks = FileLocks()
        try:
            locks.acquire([("-db", s.db_path)])
        except OSError as exc:  # FileBusy included: one line naming the file
            raise TuneError(lock_failure(exc)) from None
        refused = True  # until the parameters pass: then the database is the run's
        try:
            await _check(s, executor, control, values)
            refused = False
            store = open_tuning(s, listener.say)
            try:
                return await _play(s, store, listener, control, executor, values)
            finally:
                store.close()
        finally:
            try:
                await executor.close()  # quit after a run, or a run that could not start
            finally:
                locks.release(discard_created=refused)


async def _check(s: TuneSettings, executor: TuneExecutor, control: RunControl,
                 values: _Values) -> None:
    """Start the engine once and check the parameters against what it declares
    (KeyboardInterrupt: the run was stopped or aborted meanwhile; nothing was played)."""
    await control.unless_aborted(executor.check_engines(), or_stopped=True)
    if control.stopping:
        raise KeyboardInterrupt
    values.rounded = check_params(s.params, executor.declared, s.engine.name)


async def _play(s: TuneSettings, store: TournamentStore, listener: TuneListener,
                control: RunControl, executor: TuneExecutor, values: _Values) -> TuneOutcome:
    """The rest of a run, with the database open: rebuild the state from the stored
    games, play the games not stored (each iteration's engines made with its values when
    its first game starts, quit when its last is stored)."""
    state = values.state = replay(s, store)
    outcome = TuneOutcome(state.theta, store.count_finished(), store.count_scheduled(),
                          list(state.history), rounded=values.rounded)
    if outcome.finished:
        listener.say(f"resuming: {outcome.finished}/{outcome.total} games already played, "
                     f"{state.applied}/{s.iterations} iterations applied")
    stored = Counter(row[0] // s.games_per_iteration for row in store.results())
    faults = 0  # this run's games an engine lost by a fault
    first_fault: str | None = None  # the first of them

    async def on_result(job: ScheduledGame, record: GameRecord) -> None:
        for note in record.notes:  # what the referee met in the game (a move voided, ...)
            listener.say(f"guti: {note}")
        if record.fault is not None:
            lost = record.white if record.fault == "w" else record.black
            detail = (record.detail or "").split("\n", 1)[0]
            nonlocal faults, first_fault
            faults += 1
            first_fault = first_fault or f"{record.reason}: {detail}"
            listener.say(f"game {job.game_id + 1}: {lost} lost by {record.reason} - {detail}")
        try:
            store.record_game(job, record)
        except DatabaseGone as exc:
            outcome.failed = outcome.failed or str(exc)
            control.abort()
            return
        except StoreError as exc:
            outcome.failed = outcome.failed or (
                f"{exc}; every game stored so far is safe, and -resume continues the run")
            control.abort()
            return
        outcome.finished += 1
        k = job.game_id // s.games_per_iteration
        for done in state.add(k, plus_score(record.result, job.white == PLUS)):
            listener.iteration(IterationDone(done, state.history[done + 1],
                                             outcome.finished, outcome.total))
        stored[k] += 1
        if stored[k] >= s.games_per_iteration:
            await executor.release(k)

    feed = _Feed(store, state, s.games_per_iteration)
    played_before = outcome.finished
    await executor.run(feed.next_job, on_result, control)
    outcome.theta, outcome.history = state.theta, list(state.history)
    outcome.interrupted = control.stopping and outcome.finished < outcome.total
    played = outcome.finished - played_before
    stored_faults = [reason for *_, reason, fault in store.results() if fault is not None]
    if outcome.failed is None and not outcome.interrupted and (
            (played and faults == played) or len(stored_faults) == outcome.finished > 0):
        # not one game decided over the board, this time or in the whole run: the
        # results say nothing of the values (an interrupted run says it is interrupted)
        first = first_fault or stored_faults[0]
        whole = len(stored_faults) == outcome.finished
        outcome.failed = (
            f"every game of this run ended by an engine fault (the first: {first}), so its "
            "values are not tuned; mend the engine and start a new run" if whole else
            f"every game played since the run was resumed ({played}) ended by an engine "
            f"fault (the first: {first}), so the values they moved are not tuned; mend the "
            "engine and start a new run")
    return outcome
