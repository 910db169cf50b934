"""What engines write, as the referee reads it.

Real processes where the pipes matter (a small Python program given on the command
line writes exactly the bytes under test); the in-memory transport where only the game
loop's wording is under test. Expected moves and positions come from the rules core.
"""

from __future__ import annotations

import asyncio
import sys
import time
import tracemalloc
from collections.abc import Iterable
from pathlib import Path

import pytest

from guti.referee.execution.engine_pool import EnginePool
from guti.referee.game.engine_config import EngineConfig
from guti.referee.game.limits import parse_limits
from guti.referee.game.reasons import Reason
from guti.referee.game.runner import play_game
from guti.referee.game.settings import GameSpec
from guti.referee.process import event_loop
from guti.referee.process.engine_process import QUEUE_LIMIT, EngineProcess
from guti.referee.process.traffic_log import TrafficLog
from guti.referee.ugi.client import UgiEngine
from guti.referee.ugi.go import Go
from guti.referee.ugi.lines import Position, position_line
from guti.rules import Board
from tests.conftest import survivors
from tests.fake_transport import Answer, Reply
from tests.test_ugi_client import Scripted, first_legal, on_ply, play

FAULTY = str(Path(__file__).parent / "engines" / "faulty.py")


def writer(name: str, program: str) -> EngineConfig:
    """An 'engine' that runs ``program`` (Python; ``out`` is its binary stdout)."""
    code = "import sys, time\nout = sys.stdout.buffer\n" + program
    return EngineConfig(name=name, argv=[sys.executable, "-c", code])


async def started(cfg: EngineConfig, traffic: object = None) -> EngineProcess:
    proc = EngineProcess(cfg, traffic)  # type: ignore[arg-type]
    await proc.start()
    return proc


# -- item 5: the unread budget counts bytes both ways -----------------------------------------


def test_multibyte_lines_with_crlf_do_not_count_as_unread_once_read() -> None:
    """30 MB of lines, each read as it comes: nothing is left unread, so no flood verdict
    (the old counter added bytes and took away characters, and drifted past 16 MiB)."""
    text = "info string " + "\u20ac" * 10_000  # 3 bytes a character
    count = 1000
    assert count * len(text.encode()) > 1.5 * QUEUE_LIMIT
    cfg = writer("M", f"line = {text!r}.encode() + b'\\r\\n'\n"
                      f"for _ in range({count}):\n    out.write(line)\n"
                      "out.write(b'bestmove 13-12\\r\\n'); out.flush()\n")

    async def main() -> list[str]:
        proc = await started(cfg)
        try:
            got = [await proc.read_line(30) for _ in range(count + 1)]
        finally:
            await proc.quit(grace=0)
        return got

    got = asyncio.run(main())
    assert got[:count] == [text] * count
    assert got[-1] == "bestmove 13-12"


# -- item 6: memory bounded in bytes, for any mix of lines ------------------------------------


def test_many_empty_lines_unread_hold_little_memory() -> None:
    """Two million empty lines nobody reads (2 MB, under the 16 MiB budget): the referee
    holds about their bytes, not a Python object per line (the old queue held ~250 MB)."""
    cfg = writer("E", "out.write(b'\\n' * 2_000_000); out.write(b'bestmove 1-2\\n'); out.flush()\n"
                      "time.sleep(30)\n")

    async def main() -> tuple[int, list[str]]:
        tracemalloc.start()
        try:
            proc = await started(cfg)
            try:
                deadline = time.monotonic() + 30
                while proc._stdout.lines.line_start < 2_000_013:
                    assert time.monotonic() < deadline, "the output did not arrive"
                    await asyncio.sleep(0.01)
                peak = tracemalloc.get_traced_memory()[1]
                lines, _ = await proc.read_through("bestmove", time.monotonic() + 5, 3)
            finally:
                await proc.quit(grace=0)
        finally:
            tracemalloc.stop()
        return peak, lines

    peak, lines = asyncio.run(main())
    assert lines == ["", "", "bestmove 1-2"]
    assert peak < 12 << 20, f"{peak / 2**20:.1f} MiB held for 2 MB of unread output"


def test_more_unread_output_than_the_budget_is_a_protocol_error() -> None:
    cfg = writer("F", "chunk = b'x\\n' * 32768\nwhile True:\n    out.write(chunk); out.flush()\n")
    eng_cfg = EngineConfig(name="F", argv=cfg.argv)

    async def main() -> str:
        proc = await started(eng_cfg)
        try:
            deadline = time.monotonic() + 30
            while proc._stdout.lines.error is None:
                assert time.monotonic() < deadline, "no overflow after 30 s"
                await asyncio.sleep(0.05)
            return proc._stdout.lines.error or ""
        finally:
            await proc.quit(grace=0)

    assert f"more than {QUEUE_LIMIT} bytes of output unread" in asyncio.run(main())


# -- item 7: a flood is read in chunks, not line by line --------------------------------------


class CountingLog:
    """A traffic hook with the bulk form: counts calls and keeps the text."""

    def __init__(self) -> None:
        self.calls = 0
        self.lines: list[str] = []

    def __call__(self, wall: float, direction: str, name: str, line: str) -> None:
        if direction == "<":
            self.calls += 1
            self.lines.append(line)

    def block(self, wall: float, direction: str, name: str, text: str) -> None:
        if direction == "<":
            self.calls += 1
            self.lines.extend(text.split("\n"))


def test_a_flood_of_info_is_logged_in_blocks_and_skipped_to_the_bestmove() -> None:
    """100,000 info lines then bestmove: every line logged, in far fewer calls than lines,
    and the reply keeps only the last infos (the old reader called the hook per line)."""
    n = 100_000
    cfg = writer("I", f"out.write(b''.join(b'info depth %d\\n' % i for i in range({n})))\n"
                      "out.write(b'bestmove 5-4\\n'); out.flush(); time.sleep(30)\n")
    log = CountingLog()

    async def main() -> tuple[list[str], float]:
        proc = await started(cfg, log)
        try:
            return await proc.read_through("bestmove", time.monotonic() + 30, 3)
        finally:
            await proc.quit(grace=0)

    lines, at = asyncio.run(main())
    assert lines == [f"info depth {n - 2}", f"info depth {n - 1}", "bestmove 5-4"]
    assert log.lines[-1] == "bestmove 5-4" and len(log.lines) == n + 1
    assert log.lines[:n] == [f"info depth {i}" for i in range(n)]
    assert log.calls < n / 20
    assert at <= time.monotonic()


def test_traffic_log_blocks_read_like_single_lines(tmp_path: Path) -> None:
    path = tmp_path / "t.log"
    with TrafficLog(str(path)) as log:
        log(0.0, "<", "A", "one")
        log.block(0.0, "<", "A", "two\nthree")
        log.hook("#2").block(0.0, "<", "A", "four")
    lines = path.read_text().splitlines()
    assert [line.split(" ", 1)[1] for line in lines] == [
        "[A] < one", "[A] < two", "[A] < three", "[#2 A] < four"]


# -- item 8: blanks around bestmove ---------------------------------------------------------


def blank_padded(board: Board) -> list[Answer]:
    return [f"  bestmove {board.legal_moves[0]}  "]


def test_bestmove_with_leading_blanks_is_an_answer() -> None:
    rec = play(Scripted(blank_padded), Scripted(), parse_limits({"st": "0.5"}))
    assert rec.fault is None and rec.reason is not None and rec.reason.is_rule


def test_bestmove_with_leading_blanks_through_a_pipe() -> None:
    cfg = writer("P", "out.write(b'info x bestmove 9-9\\r\\n\\t bestmove 13-12\\r\\n'); out.flush()\n"
                      "time.sleep(30)\n")

    async def main() -> str | None:
        eng = UgiEngine(EngineProcess(cfg), cfg)
        await eng.start()
        try:
            return (await eng.wait_bestmove(time.monotonic(), 10)).bestmove
        finally:
            await eng.quit(grace=0)

    assert asyncio.run(main()) == "13-12"


# -- item 9: say why a move was refused -------------------------------------------------------


def twice_per_go() -> Scripted:
    """Answers every go, but from its second go on, the stale second answer to the
    previous go comes first (its previous position's first legal move)."""
    script = Scripted()
    previous: list[Board] = []

    def policy(board: Board) -> Iterable[Answer]:
        stale = [f"bestmove {previous[-1].legal_moves[0]}"] if previous else []
        previous.append(board)
        return [*stale, *first_legal(board)]

    script.policy = policy
    return script


def test_a_stale_second_bestmove_is_said_to_answer_a_previous_request() -> None:
    rec = play(twice_per_go(), Scripted(), parse_limits({"st": "0.5"}))
    assert (rec.reason, rec.fault) == (Reason.ILLEGAL_MOVE, "w")
    assert "it answers a previous request" in rec.detail
    board = Board("egara-guti")
    before = board.fen()
    assert f"legal in {before}" in rec.detail  # White's first position


def test_a_clock_report_shows_why_the_time_was_over() -> None:
    late = on_ply(1, lambda b: [Reply(f"bestmove {b.legal_moves[0]}", after_ms=100.2)])
    rec = play(Scripted(late), Scripted(), parse_limits({"st": "0.1"}))
    assert rec.reason is Reason.TIME_FORFEIT
    assert "used 100.2 ms, 100.0 ms allowed" in rec.detail


# -- item 17: the traffic log names the right process ------------------------------------------


def test_processes_started_at_once_get_their_own_numbers(tmp_path: Path) -> None:
    cfg = EngineConfig(name="X", argv=[sys.executable, FAULTY, "--mode", "good"])
    path = tmp_path / "traffic.log"

    async def main() -> list[int]:
        with TrafficLog(str(path)) as log:
            pool = EnginePool(cfg, "egara-guti", 20, log, tag_processes=True)
            try:
                procs = await asyncio.gather(pool.take(), pool.take())
                numbers = [pool.number[p] for p in procs]
                for p, n in zip(procs, numbers, strict=True):  # its own lines carry its number
                    p.transport.send_lines([f"debug process {n}"])
            finally:
                await pool.close()
        return numbers

    numbers = asyncio.run(main())
    assert sorted(numbers) == [1, 2]
    text = path.read_text()
    assert "[#1 X] > debug process 1" in text and "[#2 X] > debug process 2" in text


def test_a_process_started_while_its_pool_closes_is_quit_when_given_back(tmp_path: Path) -> None:
    """A take() still starting its process when the pool is closed (a late worker's check
    as its run ends) must not leave that process idle in a pool nobody closes again."""
    pidfile = tmp_path / "pids"
    cfg = EngineConfig(name="X", argv=[sys.executable, FAULTY, "--mode", "good",
                                       "--pidfile", str(pidfile)])

    async def main() -> UgiEngine:
        pool = EnginePool(cfg, "egara-guti", 20)
        starting = asyncio.ensure_future(pool.take())
        await asyncio.sleep(0)  # the start is under way
        await pool.close()
        proc = await starting
        await pool.give_back(proc, faulty=False, played=False)
        assert pool.idle == []
        return proc

    proc = asyncio.run(main())
    assert not proc.is_alive
    assert survivors(pidfile) == []


def test_go_reply_elapsed_runs_to_the_arrival_of_the_bestmove_chunk(tmp_path: Path) -> None:
    """The reply is stamped when its bytes arrived, even when read much later: the engine
    marks a file once its bestmove is written; the reply is read a second after the test
    saw that mark, and its time ends near the mark, not at the read (however long the
    engine took to answer)."""
    mark = tmp_path / "written"
    cfg = writer("S", "out.write(b'ready\\n'); out.flush(); sys.stdin.readline()\n"
                      "out.write(b'bestmove 13-12\\n'); out.flush()\n"
                      f"open({str(mark)!r}, 'w').close(); time.sleep(30)\n")

    async def main() -> tuple[float, float]:
        eng = UgiEngine(EngineProcess(cfg), cfg)
        await eng.start()
        try:
            assert await eng.read_line(30) == "ready"
            sent_at = eng.start_search(Position(), Go(movetime=100))
            deadline = time.monotonic() + 30
            while not mark.exists():  # the event: the bestmove is in the pipe
                assert time.monotonic() < deadline, "the engine never answered"
                await asyncio.sleep(0.01)
            marked_ms = (time.monotonic() - sent_at) * 1000
            await asyncio.sleep(1.0)  # the line is long there when we read it
            reply = await eng.wait_bestmove(sent_at, 10)
            return reply.elapsed_ms, marked_ms
        finally:
            await eng.quit(grace=0)

    elapsed_ms, marked_ms = asyncio.run(main())
    assert elapsed_ms < marked_ms + 500, (elapsed_ms, marked_ms)  # the read came 1000 ms later


# -- the position built ply by ply says the same as the whole line -----------------------------


def test_position_line_built_ply_by_ply_is_the_whole_line() -> None:
    board = Board("egara-guti")
    position = Position.of(board)
    for _ in range(12):
        move = board.legal_moves[-1]
        board.push(move)
        position = position.then(str(move))
        assert position_line(position) == position_line(Position(position.fen, position.moves))
    assert position == Position.of(board)


# -- uvloop (the 'fast' extra) plays the same games -----------------------------------------------


@pytest.mark.skipif(event_loop.loop_factory() is None, reason="uvloop (extra 'fast') not installed")
def test_the_same_game_on_either_event_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two reference engines at depth 1 (deterministic), once on each loop: same game."""
    cfg = EngineConfig(name="R", argv=[sys.executable, "-m", "guti.engine"])

    async def one_game() -> tuple[list[str], str | None, str | None]:
        white = await UgiEngine.launch(cfg, "egara-guti", 30)
        black = await UgiEngine.launch(cfg, "egara-guti", 30)
        try:
            depth_1 = GameSpec("egara-guti").with_limits(parse_limits({"depth": "1"}))
            rec = await play_game(white, black, depth_1)
        finally:
            await white.quit(grace=0.5)
            await black.quit(grace=0.5)
        return rec.moves, rec.result, rec.reason

    fast = event_loop.run(one_game())
    monkeypatch.setenv("GUTI_EVENT_LOOP", "asyncio")
    assert event_loop.loop_factory() is None
    assert event_loop.run(one_game()) == fast
    assert fast[2] is not None and len(fast[0]) > 4


def test_a_cancelled_wait_for_one_word_hides_no_line_from_the_next() -> None:
    cfg = writer("W", "out.write(b'a x\\nb y\\n'); out.flush(); time.sleep(30)\n")

    async def main() -> list[str]:
        proc = await started(cfg)
        try:
            with pytest.raises(TimeoutError):  # cancelled from outside, nothing consumed
                await asyncio.wait_for(proc.read_through("c", time.monotonic() + 30, 5), 1.0)
            lines, _ = await proc.read_through("b", time.monotonic() + 5, 5)
            return lines
        finally:
            await proc.quit(grace=0)

    assert asyncio.run(main()) == ["a x", "b y"]


# -- guti's own pipes: a reply in one chunk, in several, or after other lines -----------------


def test_replies_in_chunks_of_their_own_and_mixed_read_the_same() -> None:
    """Each ``go N`` gets ``bestmove mN`` in a chunk of its own (the usual reply), every third
    one after an ``info`` line in the same chunk, or split over two writes (the general
    path); every answer is read in order, with its arrival after its write."""
    program = (
        "import os\n"
        "for raw in sys.stdin.buffer:\n"
        "    n = int(raw.split()[1])\n"
        "    if n % 3 == 0:\n"
        "        out.write(b'info depth 1\\nbestmove m%d\\n' % n)\n"
        "    elif n % 3 == 1:\n"
        "        out.write(b'bestmove m%d\\n' % n)\n"
        "    else:\n"
        "        out.write(b'best'); out.flush(); time.sleep(0.01); out.write(b'move m%d\\n' % n)\n"
        "    out.flush()\n"
    )
    cfg = writer("E", program)

    async def main() -> list[tuple[list[str], bool]]:
        proc = await started(cfg)
        seen = []
        try:
            for n in range(12):
                sent = proc.send_lines([f"go {n}"])
                lines, at = await proc.read_through("bestmove", time.monotonic() + 5, 3)
                seen.append((lines, at >= sent))
        finally:
            await proc.quit(grace=0)
        return seen

    seen = asyncio.run(main())
    for n, (lines, after) in enumerate(seen):
        assert lines[-1] == f"bestmove m{n}"
        assert lines[:-1] == (["info depth 1"] if n % 3 == 0 else [])
        assert after


@pytest.mark.parametrize("chunk", [b"bestmove a1\n", b"info depth 1\nbestmove a1\n"],
                         ids=["the reply alone", "after an info line"])
def test_a_reply_that_woke_a_cancelled_wait_is_read_by_the_next(chunk: bytes) -> None:
    """A wait woken by its reply and cancelled in the same turn of the loop (an abort,
    a ``wait_for`` running out at that moment) leaves the line unread for the next wait,
    with its arrival time; the lines after it are read in order. The chunk is given to
    the pipe's reader as the event loop would (no engine writes here), both as a reply
    alone in its chunk and as a chunk with more in it."""
    cfg = writer("C", "time.sleep(30)\n")

    async def main() -> tuple[bool, list[str], float, list[str]]:
        proc = await started(cfg)
        try:
            reader = asyncio.ensure_future(proc.read_through("bestmove", time.monotonic() + 9, 2))
            await asyncio.sleep(0)  # the reader now waits
            waiter = proc._stdout._waiter
            assert waiter is not None
            proc._stdout._on_chunk(chunk, 1234.5)  # wakes the reader ...
            woken = waiter.done()
            reader.cancel()  # ... which is cancelled before it runs again
            with pytest.raises(asyncio.CancelledError):
                await reader
            lines, at = await proc.read_through("bestmove", time.monotonic() + 5, 2)
            proc._stdout._on_chunk(b"bestmove b2\n", 1240.0)
            after, _ = await proc.read_through("bestmove", time.monotonic() + 5, 2)
            return woken, lines, at, after
        finally:
            await proc.quit(grace=0)

    woken, lines, at, after = asyncio.run(main())
    assert woken  # the reply did wake the wait before the cancellation
    assert lines == chunk.decode().splitlines()
    assert at == 1234.5
    assert after == ["bestmove b2"]
