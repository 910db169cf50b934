"""Tournament formats behind one interface, and the events a run emits for the command line
to render: a format the driver has never heard of runs through it unchanged, and what the
console shows comes from the events alone."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Iterable

import pytest
from rich.console import Console

from guti.referee.cli.progress import TournamentDisplay
from guti.referee.execution.executor import Execution, ExecutionPlan, GameExecutor
from guti.referee.execution.observer import TournamentObserver
from guti.referee.execution.slots import GameSlots
from guti.referee.game.engine_config import EngineConfig
from guti.referee.game.reasons import Reason
from guti.referee.game.record import GameRecord
from guti.referee.game.scheduled import ScheduledGame
from guti.referee.process.engine_process import TrafficHook
from guti.referee.stats.standings import Standings
from guti.referee.storage.store import TournamentStore
from guti.referee.tournament import formats
from guti.referee.tournament.events import (
    GameStored,
    Note,
    PlayEnded,
    PlayStarted,
    TournamentEvent,
)
from guti.referee.tournament.feed import GameFeed, ScheduleFeed
from guti.referee.tournament.formats import FORMATS, RoundRobin, tournament_format
from guti.referee.tournament.run import run_tournament
from guti.referee.tournament.settings import TournamentSettings


def _record(job: ScheduledGame, names: list[str]) -> GameRecord:
    return GameRecord(game="egara-guti", white=names[job.white], black=names[job.black],
                      moves=["13-12", "11x13"], elapsed_ms=[1.0, 2.0], clock_ms=[100.0, 99.0],
                      result="1-0", reason=Reason.NO_LEGAL_MOVE, final_fen="x")


class _InstantSlots(GameSlots):
    """Game slots whose games end at once with White winning; what was played in order."""

    def __init__(self, names: list[str]) -> None:
        super().__init__(concurrency=2)
        self.names = names
        self.played: list[int] = []

    async def check_engines(self) -> None:
        pass

    async def play(self, job: ScheduledGame, slot: int = 0) -> GameRecord:
        self.played.append(job.game_id)
        await asyncio.sleep(0)
        return _record(job, self.names)

    def kill_all(self) -> None:
        pass

    async def close(self) -> None:
        pass


class _InstantExecution(Execution):
    """An execution whose executor plays instantly, in this process, without engines."""

    def __init__(self, plan: ExecutionPlan) -> None:
        super().__init__(plan)
        self.slots = _InstantSlots([e.name for e in plan.engines])

    def open(self, traffic: TrafficHook | None = None,
             observer: TournamentObserver | None = None, trouble: object = None,
             news: object = None) -> GameExecutor:
        return self.slots


class _LastFirst(RoundRobin):
    """A format the run driver does not know: a round-robin played last game first."""

    name = "lastfirst"

    def schedule(self) -> Iterable[ScheduledGame]:
        return reversed(list(super().schedule()))

    def feed(self, store: TournamentStore) -> GameFeed:
        return ScheduleFeed(iter(sorted(store.pending(), key=lambda j: -j.game_id)))


def _settings(tmp_path, fmt: str, **more) -> TournamentSettings:
    engines = [EngineConfig(n, [n]) for n in ("a", "b", "c")]
    return TournamentSettings(engines=engines, fmt=fmt, games=2, concurrency=2,
                              db_path=str(tmp_path / "t.db"), **more)


def test_every_format_is_a_class_behind_one_interface(tmp_path):
    assert set(FORMATS) == {"roundrobin", "gauntlet", "knockout"}
    assert all(issubclass(f, formats.TournamentFormat) for f in FORMATS.values())
    assert len(list(tournament_format(_settings(tmp_path, "roundrobin")).schedule())) == 6
    assert len(list(tournament_format(_settings(tmp_path, "gauntlet")).schedule())) == 4
    # a knockout schedules as it advances: nothing when its database is created
    assert list(tournament_format(_settings(tmp_path, "knockout")).schedule()) == []


def test_a_new_format_runs_through_the_unchanged_driver(tmp_path, monkeypatch):
    monkeypatch.setitem(FORMATS, _LastFirst.name, _LastFirst)
    settings = _settings(tmp_path, _LastFirst.name)
    execution = _InstantExecution(settings.execution_plan())
    events: list[TournamentEvent] = []
    outcome = asyncio.run(run_tournament(settings, events.append, execution=execution))
    assert (outcome.finished, outcome.total, outcome.stopped) == (6, 6, None)
    assert execution.slots.played[:2] == [5, 4]  # the format's order, not the schedule's
    assert sorted(execution.slots.played) == list(range(6))
    # the events: play starts, each stored game with the standings counting it, play ends
    assert isinstance(events[0], PlayStarted) and events[0] == PlayStarted(0, 6)
    stored = [e for e in events if isinstance(e, GameStored)]
    assert [e.finished for e in stored] == [1, 2, 3, 4, 5, 6]
    assert stored[-1].standings.games == 6 and isinstance(events[-1], PlayEnded)
    with TournamentStore(settings.db_path, create=False) as store:
        assert store.count_finished() == 6 and not list(store.pending())


def _stored(n: int, total: int, table: Standings) -> GameStored:
    job = ScheduledGame(n - 1, 0, 1, 0, 1, None)
    record = _record(job, ["a", "b"])
    table.add(0, 1, record.result, str(record.reason), None, None)
    return GameStored(job, record, n, total, table)


@pytest.mark.parametrize("quiet", [False, True])
def test_the_console_shows_what_the_events_say(tmp_path, quiet):
    out = io.StringIO()
    settings = _settings(tmp_path, "roundrobin", rating_interval=1, quiet=quiet)
    display = TournamentDisplay(Console(file=out, width=160), settings)
    table = Standings(["a", "b"])
    for event in (Note("resuming: 0/2 games already played"), PlayStarted(0, 2),
                  _stored(1, 2, table), _stored(2, 2, table), PlayEnded()):
        display(event)
    text = out.getvalue()
    assert text.startswith("resuming: 0/2 games already played\n")
    finished = [line for line in text.splitlines() if line.startswith("Finished game")]
    assert finished == ([] if quiet else [f"Finished game {n} ({n}/2): " + _record(
        ScheduledGame(0, 0, 1, 0, 1, None), ["a", "b"]).summary() for n in (1, 2)])
    # -ratinginterval 1: the standings after game 1, not after the last (the end prints them)
    assert text.count("Standings") == 1
