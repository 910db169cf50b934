"""No engine charged for the referee's trouble: a chatty engine, a stopped referee, an
engine's children that leave its process group, engines started while games run.

Through the real programs: ``tests/engines/troubled.py`` is a legal engine that does
what may trouble its referee; the events a test waits on are written by the engine.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from guti.referee.game.engine_config import EngineConfig
from guti.referee.game.limits import parse_limits
from guti.referee.game.reasons import Reason
from guti.referee.game.record import GameRecord
from guti.referee.game.runner import play_game
from guti.referee.game.settings import GameSpec
from guti.referee.process import lateness
from guti.referee.process.line_reader import QUEUE_LIMIT
from guti.referee.ugi.client import UgiEngine
from guti.rules import Side
from tests.conftest import GUTI, ROOT, survivors, wait_for

TROUBLED = str(Path(__file__).parent / "engines" / "troubled.py")


def troubled(name: str, *args: str) -> EngineConfig:
    return EngineConfig(name=name, argv=[sys.executable, TROUBLED, *args])


# -- a chatty but legal engine ---------------------------------------------------------------


def test_an_engine_writing_20_mb_of_info_in_one_move_is_not_forfeited() -> None:
    """20 MB of ``info`` lines during one move, then a legal bestmove: the game goes on,
    and what the reader holds unread stays within its budget all along."""
    peak = 0

    async def main() -> tuple[GameRecord, int]:
        nonlocal peak
        white = await UgiEngine.launch(troubled("chatty", "--chatty", "20", "--at", "2"),
                                       "egara-guti", 30)
        black = await UgiEngine.launch(troubled("plain"), "egara-guti", 30)
        lines = white.transport._stdout.lines  # type: ignore[attr-defined]
        feed = lines.feed

        def measured_feed(data: bytes, now: float) -> bool:
            nonlocal peak
            done = feed(data, now)
            peak = max(peak, len(lines.buf))
            return done

        lines.feed = measured_feed
        try:
            record = await play_game(
                white, black, GameSpec("egara-guti").with_limits(parse_limits({"tc": "60+1"})))
        finally:
            await white.quit()
            await black.quit()
        return record, lines.folded

    record, folded = asyncio.run(main())
    assert record.reason.is_rule, f"{record.reason}: {record.detail}"  # ended by the rules
    assert len(record.moves) >= 3  # the chatty move was played and the game went on
    assert folded >= 4 << 20  # old info lines were dropped unread
    assert peak <= QUEUE_LIMIT + (1 << 16) + 1, f"the reader held {peak} bytes"


# -- a stopped referee -----------------------------------------------------------------------


def troubled_engine(name: str, *args: str) -> list[str]:
    return ["-engine", f"cmd={sys.executable}", f"args={TROUBLED} {' '.join(args)}",
            f"name={name}"]


def test_a_referee_stopped_while_a_reply_waits_charges_no_engine(tmp_path: Path) -> None:
    """The referee is SIGSTOPped after the engine read its ``go`` and continued after the
    engine's reply was written and the move's time had run out: the referee read the reply
    far too late by its own fault, so the move is void and asked again, and said so; the
    game is not lost on time."""
    gate = tmp_path / "gate"
    gate.mkdir()
    events = gate / "events"
    allowed = 1.0  # a second: room for a loaded machine between the go and the stop
    proc = subprocess.Popen(
        [*GUTI, "match", *troubled_engine("gated", "--gate", str(gate), "--at", "3"),
         *troubled_engine("plain"), "-each", f"st={allowed}", "-games", "1", "-pdnout", "games.pdn", "-log", "file=traffic.log"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        wait_for(lambda: proc.poll() is not None or (events.exists() and "go" in events.read_text()),
                 "the gated go", 60)
        assert proc.poll() is None
        went_at = time.monotonic()  # the engine has read go (its time runs from before)
        os.kill(proc.pid, signal.SIGSTOP)
        (gate / "open").touch()
        wait_for(lambda: "replied" in events.read_text(), "the engine's reply written", 30)
        # The referee stays stopped until the move's time has run out twice over.
        wait_for(lambda: time.monotonic() - went_at > 2 * allowed, "the move's time gone", 30)
    finally:
        os.kill(proc.pid, signal.SIGCONT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert "the move is void and asked again" in err
    assert "referee late" in (tmp_path / "traffic.log").read_text()
    pdn = (tmp_path / "games.pdn").read_text()
    assert "time forfeit" not in pdn and "used" not in pdn, pdn


# -- an engine's children that leave its process group -----------------------------------------


def test_children_that_call_setsid_are_killed_when_their_engine_quits(tmp_path: Path) -> None:
    """Each engine process starts a child that leaves its process group (``setsid``), out of
    the group kill's reach: guti, their subreaper, kills them by the engine's mark when the
    engine quits (``restart=on``: one engine process per game, four of them)."""
    pids = tmp_path / "pids"
    done = subprocess.run(
        [*GUTI, "match", *troubled_engine("a", "--setsid", str(pids)),
         *troubled_engine("b", "--setsid", str(pids)), "-each", "depth=1", "restart=on",
         "-games", "2"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert len(pids.read_text().split()) == 8  # four children, pid and start time each
    assert not survivors(pids)


def test_children_that_call_setsid_die_with_a_killed_referee(tmp_path: Path) -> None:
    """guti SIGKILLed mid-game: its lifeline kills the engines' groups and also the
    children that left them, by the mark they carry."""
    pids, gate = tmp_path / "pids", tmp_path / "gate"
    gate.mkdir()
    proc = subprocess.Popen(
        [*GUTI, "match", *troubled_engine("a", "--setsid", str(pids), "--gate", str(gate)),
         *troubled_engine("b", "--setsid", str(pids)), "-each", "tc=60+1", "-games", "2"],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        wait_for(lambda: proc.poll() is not None or (gate / "events").exists(), "a's go", 60)
        assert proc.poll() is None
        wait_for(lambda: pids.exists() and len(pids.read_text().split()) == 4,
                 "both setsid children started", 30)
    finally:
        proc.kill()
        proc.wait(30)
    wait_for(lambda: not survivors(pids), "the setsid children ended by the lifeline", 10)


def _play_through_a_stalled_loop(tmp_path: Path, at: int, *gated: str
                                 ) -> tuple[GameRecord, list[str]]:
    """A game in which the referee's event loop is held up by work of its own (a blocking
    call injected here) from just after the gated engine read its ``go`` for ply ``at``
    until after its reply was written and the move's time had run out; the record and the
    referee's notes in the traffic log. ``gated``: more arguments of that engine."""
    gate = tmp_path / "gate"
    gate.mkdir()
    events = gate / "events"
    allowed = 1.0  # a second: room for a loaded machine between the go and the stop
    notes: list[str] = []

    def traffic(wall: float, direction: str, name: str, line: str) -> None:
        if direction == "#":
            notes.append(line)

    def stall_the_loop() -> None:
        went_at = time.monotonic()
        (gate / "open").touch()
        while "replied" not in events.read_text() or time.monotonic() - went_at < 2 * allowed:
            time.sleep(0.01)  # the stall itself: the loop runs nothing meanwhile

    async def staller() -> None:
        while not (events.exists() and "go" in events.read_text()):
            await asyncio.sleep(0.005)
        stall_the_loop()

    async def main() -> GameRecord:
        white = await UgiEngine.launch(
            troubled("gated", "--gate", str(gate), "--at", str(at), *gated),
            "egara-guti", 30, traffic)
        black = await UgiEngine.launch(troubled("plain"), "egara-guti", 30, traffic)
        stall = asyncio.create_task(staller())
        try:
            spec = GameSpec("egara-guti").with_limits(parse_limits({"st": str(allowed)}))
            return await play_game(white, black, spec)
        finally:
            stall.cancel()
            await white.quit()
            await black.quit()

    return asyncio.run(main()), notes


@pytest.mark.parametrize("at", [1, 3], ids=["the game's first reply", "a later reply"])
def test_a_stall_of_the_referees_own_loop_charges_no_engine(tmp_path: Path, at: int) -> None:
    """The move is void and asked again, noted in the traffic log, and the game is not
    lost on time; also when it is the game's first reply (the watch of the referee's
    lateness starts with the game)."""
    record, notes = _play_through_a_stalled_loop(tmp_path, at)
    assert record.reason.is_rule, f"{record.reason}: {record.detail}"
    assert any("the move is void and asked again" in note for note in notes), notes
    # and the record carries it, for whoever reports the game (a terminal, a tournament)
    assert [n for n in record.notes if "void and asked again" in n], record.notes


def test_lateness_during_a_move_the_engine_flooded_is_not_forgiven(tmp_path: Path) -> None:
    """The same stall, but the engine wrote 2 MB of ``info`` lines during that move:
    reading an engine's own flood is what makes a referee late, so the move is not
    voided and the engine loses on time (the flood alone would not lose it)."""
    record, notes = _play_through_a_stalled_loop(tmp_path, 3, "--chatty", "2")
    assert record.reason == Reason.TIME_FORFEIT and record.fault == Side.WHITE, (
        f"{record.reason}: {record.detail}")
    assert len(record.moves) == 4  # its third go was ply 5
    assert not any("void" in note for note in notes), notes


def test_the_watch_counts_a_stall_of_the_loop_whole() -> None:
    """A callback that holds the loop up for 0.1 s: the span is counted whole, also when
    asked before the heartbeat has run again (the stall still running at the asking)."""

    async def main() -> tuple[float, float]:
        with lateness.hold() as watch:
            await asyncio.sleep(2 * lateness.COARSE)  # the heartbeat has ticked
            start = time.monotonic()
            time.sleep(0.1)  # the stall: nothing runs on the loop meanwhile
            end = time.monotonic()
            asked_at_once = watch.late_within(start, end)
            await asyncio.sleep(2 * lateness.COARSE)
            return asked_at_once, watch.late_within(start, end)

    at_once, later = asyncio.run(main())
    assert at_once >= 0.1 and later >= 0.1


async def _ticked(watch: lateness.LatenessWatch) -> None:
    """Until the watch's heartbeat has run once more (the loop kept turning meanwhile)."""
    last = watch.last_run
    while watch.last_run == last:
        await asyncio.sleep(0)


def test_near_a_deadline_the_watch_sees_a_stall_shorter_than_its_coarse_period() -> None:
    """A 5 ms stall right after a tick: while a reply due soon is awaited the next tick is
    due a millisecond later, inside the stall, so the stall is counted; without the
    awaited deadline the ticks are coarse again."""

    async def main() -> tuple[float, float, float]:
        with lateness.hold() as watch:
            watch.awaiting("game", time.monotonic() + lateness.COARSE)
            await _ticked(watch)
            fine = watch.period
            start = time.monotonic()
            time.sleep(0.005)  # the stall: nothing runs on the loop meanwhile
            end = time.monotonic()
            await _ticked(watch)
            late = watch.late_within(start, end)
            watch.awaiting("game", None)
            await _ticked(watch)
            return fine, late, watch.period

    fine, late, coarse = asyncio.run(main())
    assert fine == lateness.FINE and coarse == lateness.COARSE
    assert late >= 0.005


# -- lines never ended ------------------------------------------------------------------------

CR_ONLY_ENGINE = '''
import sys
for line in sys.stdin:
    word = line.split()[:1]
    if word == ["ugi"]:
        sys.stdout.write("id name cr\\r\\nugiok\\r\\n")
    elif word == ["isready"]:
        sys.stdout.write("readyok\\n" if "{ready}" == "lf" else "readyok\\r")
    elif word == ["go"]:
        sys.stdout.write("bestmove 16-12\\r")
    sys.stdout.flush()
'''


@pytest.mark.parametrize("ready", ["lf", "cr"])
def test_a_reply_ended_by_a_lone_cr_is_named_in_the_fault(tmp_path: Path, ready: str) -> None:
    """An engine that ends its lines with "\\r" alone never completes a line: the game is
    lost as stalled (or the engine never starts), and the message shows what it wrote
    unended, so that its author sees the missing newline."""
    engine = tmp_path / "cr.py"
    engine.write_text(CR_ONLY_ENGINE.replace("{ready}", ready))
    done = subprocess.run(
        [*GUTI, "match", "-engine", f"cmd={sys.executable}", f"args={engine}", "name=cr",
         "-engine", f"cmd={sys.executable}", f"args={TROUBLED}", "name=plain",
         "-each", "tc=0.3+0.01", "-games", "1", "-stall-timeout", "0.2",
         "-handshake-timeout", "1"],
        capture_output=True, text=True, timeout=60, cwd=tmp_path)
    if ready == "lf":
        assert done.returncode == 0, done.stderr
        assert "stalled" in done.stdout
        assert '"bestmove 16-12\\r", has no newline after it' in done.stdout
    else:
        assert done.returncode != 0 and "Traceback" not in done.stderr
        assert "no complete handshake" in done.stderr
        assert '"readyok\\r", has no newline after it' in done.stderr
