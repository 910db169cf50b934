"""The pure parts of tournaments: schedule order, the store's guarantees, standings counters,
when a game slot goes on to its next game."""

from __future__ import annotations

import asyncio
import itertools
import sqlite3
from collections import Counter
from itertools import islice

import pytest

from guti.referee.execution.slots import GameSlots
from guti.referee.execution.stopping import RunControl
from guti.referee.game.engine_config import EngineConfig
from guti.referee.game.openings import Opening
from guti.referee.game.reasons import Reason
from guti.referee.game.record import GameRecord
from guti.referee.game.scheduled import ScheduledGame
from guti.referee.process import lifeline
from guti.referee.stats.standings import Standings
from guti.referee.storage.store import StoreError, TournamentStore
from guti.referee.tournament.scheduler import (
    ScheduleError,
    pairings,
    schedule,
    total_games,
)


def test_round_robin_and_gauntlet_pairings():
    assert pairings("roundrobin", 4) == [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    assert pairings("gauntlet", 4) == [(0, 1), (0, 2), (0, 3)]
    with pytest.raises(ScheduleError, match="at least two"):
        pairings("roundrobin", 1)
    with pytest.raises(ScheduleError, match="unknown tournament format"):
        pairings("swiss", 3)


@pytest.mark.parametrize("engines, rounds, games", [(3, 2, 2), (4, 1, 4), (5, 3, 1), (2, 2, 3)])
def test_schedule_counts_ids_and_colours(engines, rounds, games):
    jobs = list(schedule("roundrobin", engines, rounds, games))
    assert len(jobs) == total_games("roundrobin", engines, rounds, games)
    assert [j.game_id for j in jobs] == list(range(len(jobs)))
    per_pair = Counter(frozenset((j.white, j.black)) for j in jobs)
    assert set(per_pair.values()) == {rounds * games}
    if games % 2 == 0:
        whites = Counter(j.white for j in jobs)
        assert len(set(whites.values())) == 1


@pytest.mark.parametrize("engines, rounds, games", [(2, 6, 1), (2, 4, 3), (3, 4, 1), (3, 2, 5)])
def test_colours_alternate_game_after_game_across_rounds(engines, rounds, games):
    """As cutechess-cli reverses colours after every game: an odd -games does not give
    one engine White in every round; over an even number of an encounter's games each
    engine is White in half."""
    jobs = list(schedule("roundrobin", engines, rounds, games))
    for pair in pairings("roundrobin", engines):
        mine = [j for j in jobs if {j.white, j.black} == set(pair)]
        assert all(a.white != b.white for a, b in itertools.pairwise(mine)), mine
        whites = Counter(j.white for j in mine)
        assert whites[pair[0]] == whites[pair[1]] == len(mine) // 2


def test_pairs_share_an_opening_with_colours_reversed():
    openings = [Opening(None, (m,), m) for m in ("13-12", "14-12", "15-12")]
    jobs = list(schedule("roundrobin", 3, 2, 4, openings))
    by_pair: dict[int, list] = {}
    for job in jobs:
        by_pair.setdefault(job.pair_id, []).append(job)
    for pair in by_pair.values():
        a, b = pair
        assert (a.white, a.black) == (b.black, b.white) and a.opening == b.opening
    # every encounter sees the same opening in the same slot
    slot_openings = {(j.round, j.pair_id // 3): j.opening for j in jobs}
    assert len(set(slot_openings.values())) == 3


def test_an_early_stop_after_any_whole_pair_round_is_balanced():
    """Pairs are interleaved across encounters: after the first pair of every encounter,
    each encounter has played one pair, none ran ahead."""
    jobs = list(schedule("roundrobin", 4, 1, 6))
    encounters = 6
    first = jobs[: 2 * encounters]
    assert Counter(frozenset((j.white, j.black)) for j in first) == Counter(
        {frozenset(p): 2 for p in pairings("roundrobin", 4)}
    )


def test_schedule_is_a_stream():
    stream = schedule("roundrobin", 50, 100, 2)  # 245,000 games, nothing built up front
    assert [j.game_id for j in islice(stream, 3)] == [0, 1, 2]


def _record(white: str, black: str, result: str = "1-0") -> GameRecord:
    return GameRecord(game="egara-guti", white=white, black=black, moves=["13-12", "11x13"],
                      elapsed_ms=[1.0, 2.0], clock_ms=[100.0, 99.0], result=result,
                      reason=Reason.NO_LEGAL_MOVE, final_fen="x")


def test_store_keeps_each_game_once_and_pending_skips_stored(tmp_path):
    path = str(tmp_path / "t.db")
    engines = [EngineConfig("a", ["a"]), EngineConfig("b", ["b"])]
    jobs = list(schedule("roundrobin", 2, 2, 2))
    with TournamentStore(path) as store:
        store.create({"x": 1}, "fp", engines, iter(jobs))
        store.record_game(jobs[1], _record("b", "a"))
        assert [j.game_id for j in store.pending()] == [0, 2, 3]
        with pytest.raises(StoreError, match="game 1 not stored"):
            store.record_game(jobs[1], _record("b", "a", "0-1"))
    with sqlite3.connect(path) as conn:  # read back by plain SQL, not by the store
        assert conn.execute("SELECT game_id, result, moves FROM games").fetchall() == [
            (1, "1-0", "13-12 11x13")
        ]
    with TournamentStore(path, create=False) as again:
        assert again.engine_names() == ["a", "b"] and again.count_scheduled() == 4
        (_info, record), = list(again.records())
        assert record.moves == ["13-12", "11x13"] and record.reason is Reason.NO_LEGAL_MOVE


def test_store_refuses_other_files(tmp_path):
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE t (x)")
    with pytest.raises(StoreError, match="not a guti tournament database"):
        TournamentStore(str(other))
    with pytest.raises(StoreError):
        TournamentStore(str(tmp_path / "missing.db"), create=False)
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(StoreError, match="junk.db"):
        TournamentStore(str(junk))


def test_standings_counts_faults_pairs_and_crosstable():
    table = Standings(["a", "b"])
    table.add(0, 1, "1-0", "no legal move", None, pair_id=0)  # a wins as white
    table.add(1, 0, "1/2-1/2", "repetition", None, pair_id=0)  # pair 0: a scores 1.5
    table.add(0, 1, "0-1", "time forfeit", "w", pair_id=1)  # a loses on time
    table.add(1, 0, "0-1", "illegal move", "w", pair_id=1)  # b plays illegal: a wins
    table.add(0, 1, "*", None, None, pair_id=2)  # unfinished: not counted
    a, b = table.lines
    assert (a.wins, a.draws, a.losses, a.points) == (2, 1, 1, 2.5)
    assert (b.wins, b.draws, b.losses) == (1, 1, 2)
    assert a.faults["time"] == 1 and b.faults["illegal"] == 1 and a.rules == 2
    assert table.ptnml[(0, 1)] == [0, 0, 1, 1, 0]  # pair scores 1 (WL) and 1.5 (WD)
    assert table.unfinished == 1 and table.leader().name == "a"


# ------------------------------------------------------------------ game slots and results
class _InstantSlots(GameSlots):
    """Game slots whose games end at once, with what happened written down in ``events``."""

    def __init__(self, events: list[str]) -> None:
        super().__init__(concurrency=1)
        self.events = events

    async def check_engines(self) -> None:
        pass

    async def play(self, job: ScheduledGame, slot: int = 0) -> GameRecord:
        self.events.append(f"play {job.game_id}")
        await asyncio.sleep(0)
        return _record("a", "b")

    def kill_all(self) -> None:
        pass

    async def close(self) -> None:
        pass


def _slots_events(ahead: bool) -> list[str]:
    """Three games in one slot, each result handled slowly (a store that waits for the
    disk); the order in which games start and results are handled."""
    events: list[str] = []
    jobs = iter(list(schedule("roundrobin", 2, 1, 3)))

    async def handle(job: ScheduledGame, record: GameRecord) -> None:
        events.append(f"store {job.game_id}")
        await asyncio.sleep(0.05)
        events.append(f"stored {job.game_id}")

    async def main() -> None:
        await _InstantSlots(events).run(lambda: next(jobs, None), handle, RunControl(),
                                        ahead=ahead)
        events.append("run returned")

    asyncio.run(main())
    return events


def test_a_slot_waits_for_its_result_unless_it_may_go_ahead():
    assert _slots_events(ahead=False) == [
        "play 0", "store 0", "stored 0", "play 1", "store 1", "stored 1",
        "play 2", "store 2", "stored 2", "run returned"]
    ahead = _slots_events(ahead=True)
    # the next game starts before the last one is stored, even before its store begins
    # (with -referees the referee process waits for it) ...
    assert ahead.index("play 1") < ahead.index("store 0")
    assert ahead.index("play 2") < ahead.index("store 1")
    assert ahead.index("stored 0") < ahead.index("store 1")  # one game ahead at most
    # ... results are handled in the order the games ended, every one before run returns
    assert [e for e in ahead if e.startswith("stored")] == ["stored 0", "stored 1", "stored 2"]
    assert ahead[-1] == "run returned"


def test_a_result_handler_that_raises_is_not_lost_when_slots_go_ahead():
    """A bug in handling a result ends the run with that error, as it would if the slot
    had waited for it."""
    jobs = iter(list(schedule("roundrobin", 2, 1, 1)))

    async def broken(job: ScheduledGame, record: GameRecord) -> None:
        raise RuntimeError(f"cannot handle game {job.game_id}")

    async def main() -> None:
        await _InstantSlots([]).run(lambda: next(jobs, None), broken, RunControl(), ahead=True)

    with pytest.raises(RuntimeError, match="cannot handle game 0"):
        asyncio.run(main())


def test_unless_aborted_gives_the_result_or_none_once_aborted(monkeypatch):
    """The wait every game is run through: the work's result; None (the work cancelled)
    when the run is aborted first, from the loop or from another thread; None at once when
    it already was; and a cancelled waiter cancels its work. (An abort also SIGKILLs every
    engine this process registered: none of this test's, and none of another test's.)"""
    monkeypatch.setattr(lifeline, "kill_registered", lambda: None)

    async def main() -> None:
        control = RunControl()
        assert await control.unless_aborted(asyncio.sleep(0, "done")) == "done"
        cancelled: list[bool] = []

        async def forever() -> None:
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                cancelled.append(True)
                raise

        loop = asyncio.get_running_loop()
        loop.call_later(0.05, control.abort)
        assert await asyncio.wait_for(control.unless_aborted(forever()), 5) is None
        assert cancelled == [True]
        assert await control.unless_aborted(asyncio.sleep(0, "late")) is None  # aborted

        other = RunControl()
        loop.call_later(0.05, lambda: loop.run_in_executor(None, other.abort))
        assert await asyncio.wait_for(other.unless_aborted(forever()), 5) is None
        assert cancelled == [True, True]

        waiting = asyncio.ensure_future(RunControl().unless_aborted(forever()))
        await asyncio.sleep(0.05)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        await asyncio.sleep(0)
        assert cancelled == [True, True, True]

    asyncio.run(main())
