"""The referee against real engine processes that misbehave in every way we know.

Each test starts real processes (``tests/engines/faulty.py``), plays through
the public API (``UgiEngine.launch`` + ``play_game``), and checks the
result, the reason and the detail, that the referee came back within a hard
bound (so a hang fails the test instead of hanging the suite), and that no
process of the engine (nor any grandchild) is left, zombies included.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from guti.referee.game.engine_config import EngineConfig
from guti.referee.game.limits import parse_limits
from guti.referee.game.reasons import Reason
from guti.referee.game.runner import REASON_OF_FAULT, play_game
from guti.referee.game.settings import GameSpec, Timeouts
from guti.referee.process.errors import EngineStartError
from guti.referee.ugi.client import UgiEngine
from guti.rules import Board
from tests.conftest import survivors

FAULTY = str(Path(__file__).parent / "engines" / "faulty.py")
BOUND = 25.0  # seconds: no single scenario may take longer


def config(name: str, mode: str = "good", pidfile: Path | None = None, *extra: str) -> EngineConfig:
    argv = [sys.executable, FAULTY, "--mode", mode, "--seed", str(abs(hash(name)) % 1000)]
    if pidfile is not None:
        argv += ["--pidfile", str(pidfile)]
    return EngineConfig(name=name, argv=[*argv, *extra])


def run(coro, bound: float = BOUND):
    async def bounded():
        return await asyncio.wait_for(coro, bound)

    return asyncio.run(bounded())


async def _match(white_cfg, black_cfg, game="egara-guti", tc="tc=2+0.05", timeouts=None):
    limits = parse_limits(dict([tc.split("=", 1)]))
    spec = GameSpec(game, timeouts=timeouts or Timeouts()).with_limits(limits)
    white = await UgiEngine.launch(white_cfg, game, handshake_timeout=10)
    try:
        black = await UgiEngine.launch(black_cfg, game, handshake_timeout=10)
    except BaseException:
        await white.quit()
        raise
    try:
        return await play_game(white, black, spec)
    finally:
        await white.quit(grace=0.5, term_grace=0.5)
        await black.quit(grace=0.5, term_grace=0.5)


def play(white_cfg, black_cfg, bound: float = BOUND, **kw):
    """Play one game within ``bound`` seconds (a hang fails the test with a TimeoutError)."""
    return run(_match(white_cfg, black_cfg, **kw), bound)


@pytest.mark.parametrize("game", ["egara-guti", "pretwa"])
def test_good_engines_finish_by_the_rules(tmp_path, game):
    pids = tmp_path / "pids"
    record = play(config("A", "good", pids), config("B", "good", pids), game=game)
    assert record.reason is not None and record.reason.is_rule
    assert record.fault is None
    # Replay independently: every move legal, and the final position is over
    # with exactly the recorded result and reason.
    board = Board(game)
    for move in record.moves:
        board.push_str(move)
    outcome = board.outcome()
    assert outcome is not None
    assert (outcome.result, outcome.reason) == (record.result, str(record.reason))
    assert record.final_fen == board.fen()
    assert all(ms is not None and ms >= 0 for ms in record.elapsed_ms)
    assert survivors(pids) == []


def test_a_reply_whose_word_and_move_come_apart_is_read_whole(tmp_path):
    """An engine that flushes ``bestmove`` alone, then its move: the referee reads the
    word on its own and waits for the rest of the line (it used to fail on that chunk,
    lose it, and call the game stalled)."""
    pids = tmp_path / "pids"
    record = play(config("A", "split", pids), config("B", "good", pids))
    assert record.fault is None and record.reason is not None and record.reason.is_rule
    assert len(record.moves) > 10
    assert survivors(pids) == []


def test_crash_mid_game_is_a_disconnect_with_exit_code(tmp_path):
    pids = tmp_path / "pids"
    record = play(config("A", "crash", pids, "--at", "2"), config("B", "good", pids))
    assert (record.result, record.reason, record.fault) == ("0-1", Reason.DISCONNECT, "w")
    assert "exit code 3" in record.detail
    assert record.plies == 2  # A's first move and B's answer
    assert survivors(pids) == []


def test_killed_by_signal_reports_the_signal(tmp_path):
    pids = tmp_path / "pids"
    record = play(config("A", "good", pids), config("B", "kill", pids, "--at", "1"))
    assert (record.result, record.reason) == ("1-0", Reason.DISCONNECT)
    assert "signal 9" in record.detail and "SIGKILL" in record.detail
    assert survivors(pids) == []


def test_hang_is_stalled_within_its_time_plus_grace(tmp_path):
    pids = tmp_path / "pids"
    record = play(
        config("A", "hang", pids), config("B", "good", pids), tc="tc=1+0",
        timeouts=Timeouts(stall_grace=0.5),
        bound=10,
    )
    assert (record.result, record.reason) == ("0-1", Reason.STALLED)
    assert survivors(pids) == []


def test_hang_without_clock_ends_at_move_timeout(tmp_path):
    pids = tmp_path / "pids"
    record = play(
        config("A", "good", pids),
        config("B", "hang", pids, "--at", "2"),
        tc="depth=3",
        timeouts=Timeouts(move=0.7),
        bound=10,
    )
    assert (record.result, record.reason) == ("1-0", Reason.STALLED)
    assert "move timeout" in record.detail
    assert survivors(pids) == []


def test_too_slow_is_a_time_forfeit(tmp_path):
    pids = tmp_path / "pids"
    record = play(
        config("A", "good", pids), config("B", "slow", pids, "--at", "2"), tc="st=0.5"
    )  # half a second for A's moves on a loaded machine; B answers 0.4 s past its time
    assert (record.result, record.reason) == ("1-0", Reason.TIME_FORFEIT)
    assert record.plies == 3
    assert survivors(pids) == []


def test_illegal_move_names_the_move_and_the_position(tmp_path):
    pids = tmp_path / "pids"
    record = play(config("A", "illegal", pids, "--at", "2"), config("B", "good", pids))
    assert (record.result, record.reason) == ("0-1", Reason.ILLEGAL_MOVE)
    board = Board("egara-guti")
    for move in record.moves:
        board.push_str(move)
    assert board.fen() in record.detail
    played = record.detail.split("illegal ", 1)[1].split()[0]
    assert played not in {str(m) for m in board.legal_moves}
    assert survivors(pids) == []


def test_garbage_bestmove_is_a_protocol_error(tmp_path):
    pids = tmp_path / "pids"
    record = play(config("A", "good", pids), config("B", "garbage", pids))
    assert (record.result, record.reason) == ("1-0", Reason.PROTOCOL_ERROR)
    assert "@@garbage@@" in record.detail
    assert survivors(pids) == []


def test_bestmove_none_with_moves_available_is_illegal(tmp_path):
    pids = tmp_path / "pids"
    record = play(config("A", "none", pids), config("B", "good", pids))
    assert (record.result, record.reason) == ("0-1", Reason.ILLEGAL_MOVE)
    assert "bestmove none" in record.detail
    assert survivors(pids) == []


def test_chatter_without_bestmove_is_stalled(tmp_path):
    pids = tmp_path / "pids"
    record = play(
        config("A", "chatter", pids), config("B", "good", pids), tc="tc=0.5+0",
        timeouts=Timeouts(stall_grace=0.3),
    )
    assert (record.result, record.reason) == ("0-1", Reason.STALLED)
    assert survivors(pids) == []


def test_engine_ignoring_quit_and_sigterm_is_killed(tmp_path):
    pids = tmp_path / "pids"
    record = play(config("A", "ignore-quit", pids), config("B", "good", pids))
    assert record.reason is not None and record.reason.is_rule
    assert len(pids.read_text().split("\n")) >= 3  # both engines registered
    assert survivors(pids) == []


def test_grandchild_holding_the_pipe_is_killed_and_reaped(tmp_path):
    pids = tmp_path / "pids"
    record = play(config("A", "fork", pids), config("B", "good", pids))
    assert record.reason is not None and record.reason.is_rule
    assert len([ln for ln in pids.read_text().split("\n") if ln]) == 3  # A, A's grandchild, B
    assert survivors(pids) == []


def test_crash_while_grandchild_holds_pipe_is_a_disconnect_not_a_hang(tmp_path):
    pids = tmp_path / "pids"
    record = play(
        config("A", "good", pids), config("B", "fork-crash", pids, "--at", "2"), tc="tc=5+0"
    )
    assert (record.result, record.reason) == ("1-0", Reason.DISCONNECT)
    assert "exit code 3" in record.detail
    assert survivors(pids) == []


def test_crash_while_a_child_of_another_session_holds_the_pipe_is_a_disconnect(tmp_path):
    """The child left the engine's process group, so killing the group does not close the
    pipe: it is found as guti's child (the subreaper's) with the engine's mark instead. No
    clock: a missed end of output would be a wait of the whole move timeout, then "stalled"."""
    pids = tmp_path / "pids"
    record = play(config("A", "good", pids), config("B", "setsid-crash", pids, "--at", "2"),
                  tc="depth=1")
    assert (record.result, record.reason) == ("1-0", Reason.DISCONNECT)
    assert "exit code 3" in record.detail
    assert survivors(pids) == []


def test_ten_megabyte_line_is_a_protocol_error(tmp_path):
    pids = tmp_path / "pids"
    record = play(config("A", "longline", pids), config("B", "good", pids), tc="tc=10+0")
    assert (record.result, record.reason) == ("0-1", Reason.PROTOCOL_ERROR)
    assert "longer than" in record.detail
    assert survivors(pids) == []


def test_closed_stdout_is_a_disconnect(tmp_path):
    pids = tmp_path / "pids"
    record = play(config("A", "good", pids), config("B", "close-stdout", pids), tc="tc=10+0")
    assert (record.result, record.reason) == ("1-0", Reason.DISCONNECT)
    assert "closed its output" in record.detail
    assert survivors(pids) == []


@pytest.mark.parametrize(
    ("mode", "extra", "expect"),
    [
        ("exit-now", (), "exit code 0"),
        ("startup-crash", (), "RuntimeError"),
        ("no-ugiok", (), "within 0.8 s"),
        ("good", ("--variants", "egara-guti"), "does not play pretwa"),
    ],
)
def test_start_failures_are_reported_not_hung(tmp_path, mode, extra, expect):
    pids = tmp_path / "pids"

    # only the engine that never answers waits out its short handshake; the others have
    # time enough to start on a loaded machine and say what is wrong with them
    handshake = 0.8 if mode == "no-ugiok" else 20

    async def launch():
        return await UgiEngine.launch(config("X", mode, pids, *extra), "pretwa", handshake)

    with pytest.raises(EngineStartError) as info:
        run(launch(), bound=handshake + 10)  # reported, not hung: a hang is a TimeoutError
    assert REASON_OF_FAULT[info.value.kind] is Reason.START_FAILURE
    assert expect in str(info.value)
    assert survivors(pids) == []


def test_missing_executable_is_a_start_failure(tmp_path):
    cfg = EngineConfig(name="ghost", argv=[str(tmp_path / "no-such-engine")])
    with pytest.raises(EngineStartError) as info:
        run(UgiEngine.launch(cfg, "egara-guti"))
    assert "No such file" in str(info.value)


def test_engine_without_variant_option_is_assumed_to_play_the_game(tmp_path):
    pids = tmp_path / "pids"
    record = play(
        config("A", "good", pids, "--variants", ""),
        config("B", "good", pids, "--variants", ""),
    )
    assert record.reason is not None and record.reason.is_rule
    assert survivors(pids) == []


def test_traffic_hook_sees_both_directions_and_stderr(tmp_path):
    seen: list[tuple[str, str, str]] = []

    async def go():
        eng = await UgiEngine.launch(
            config("T", "startup-crash"), "egara-guti", 2.0, traffic=lambda t, d, n, ln: seen.append((d, n, ln))
        )
        await eng.quit()

    with pytest.raises(EngineStartError):
        run(go())
    assert (">", "T", "ugi") in seen
    assert any(d == "!" and "RuntimeError" in ln for d, _, ln in seen)
    assert all(d in "<>!" for d, _, _ in seen)
    assert os.environ is not None


def _pids_of(pidfile: Path) -> list[str]:
    return [ln.split()[0] for ln in pidfile.read_text().split("\n") if ln]


def test_match_restarts_a_faulty_engine_and_honours_restart_on(tmp_path):
    from guti.referee.game.settings import GameSettings
    from guti.referee.tournament.match import run_match
    from guti.referee.tournament.settings import MatchSettings

    good_pids, bad_pids = tmp_path / "good", tmp_path / "bad"
    good = config("Good", "good", good_pids)
    good.restart = True
    settings = MatchSettings(
        first=good,
        second=config("Bad", "crash", bad_pids, "--at", "1"),
        game=GameSettings("pretwa", limits=parse_limits({"tc": "2+0"})),
        games=3,
    )
    records = []
    score = run(run_match(settings, lambda i, r: records.append(r)))
    assert [r.reason for r in records] == [Reason.DISCONNECT] * 3
    assert [r.result for r in records] == ["1-0", "0-1", "1-0"]
    assert (score.wins, score.draws, score.losses) == (3, 0, 0)
    assert len(set(_pids_of(bad_pids))) == 3  # restarted after each crash
    assert len(set(_pids_of(good_pids))) == 3  # restart=on: a fresh process per game
    assert survivors(good_pids) == [] and survivors(bad_pids) == []


def test_match_keeps_an_engine_that_lost_on_time_and_replaces_an_illegal_one(tmp_path):
    """A time forfeit's bestmove did come (late): the process is sound and plays on; an
    illegal move's process is never trusted again."""
    from guti.referee.game.settings import GameSettings
    from guti.referee.tournament.match import run_match
    from guti.referee.tournament.settings import MatchSettings

    late_pids, illegal_pids = tmp_path / "late", tmp_path / "illegal"
    settings = MatchSettings(
        first=config("Late", "slow", late_pids, "--at", "1"),
        second=config("Illegal", "illegal", illegal_pids, "--at", "1"),
        game=GameSettings("pretwa", limits=parse_limits({"st": "0.5"})),
        games=3,
    )
    records = []
    run(run_match(settings, lambda i, r: records.append(r)))
    # Late forfeits game 1 (its first go); its go counter runs on, so it is never late again
    # and Illegal, restarted after every illegal move, loses games 2 and 3 at its first go.
    assert [r.reason for r in records] == [Reason.TIME_FORFEIT, Reason.ILLEGAL_MOVE,
                                           Reason.ILLEGAL_MOVE]
    assert len(_pids_of(late_pids)) == 1  # kept after its time forfeit
    assert len(_pids_of(illegal_pids)) == 2  # replaced after its illegal move in game 2
    assert survivors(late_pids) == [] and survivors(illegal_pids) == []


def test_match_keeps_a_healthy_engine_between_games(tmp_path):
    from guti.referee.game.settings import GameSettings
    from guti.referee.tournament.match import run_match
    from guti.referee.tournament.settings import MatchSettings

    pids = tmp_path / "pids"
    settings = MatchSettings(
        first=config("A", "good", pids),
        second=config("B", "good", pids),
        game=GameSettings("pretwa", limits=parse_limits({"tc": "2+0"})),
        games=3,
    )
    score = run(run_match(settings))
    assert score.games == 3
    assert len(_pids_of(pids)) == 2
    assert survivors(pids) == []
