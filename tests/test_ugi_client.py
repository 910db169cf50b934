"""The UGI client and the game loop's fault handling through an in-memory engine
(:class:`tests.fake_transport.FakeTransport`): no processes, milliseconds per test.

Every expected outcome is computed with the rules core (legal moves, the end of a
game), never written down; the fakes only decide *how* an engine misbehaves.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

from guti.referee.game import game_start
from guti.referee.game.engine_config import EngineConfig
from guti.referee.game.judge import Fault, judge_reply
from guti.referee.game.limits import Limits, parse_limits
from guti.referee.game.reasons import Reason
from guti.referee.game.record import GameRecord
from guti.referee.game.runner import play_game
from guti.referee.game.settings import GameSpec, Timeouts
from guti.referee.process.errors import EngineStartError, EngineTimeout
from guti.referee.ugi import options
from guti.referee.ugi.client import UgiEngine
from guti.referee.ugi.go import Go
from guti.referee.ugi.lines import MAX_INFOS, GoReply, Position, position_line
from guti.rules import Board, RulesError
from tests.fake_transport import Answer, FakeTransport, Reply

GAME = "egara-guti"
REFEREE = Path(__file__).resolve().parent.parent / "guti" / "referee"

#: What an engine answers to ``go`` given the position it was sent.
Policy = Callable[[Board], Iterable[Answer]]


def first_legal(board: Board) -> list[Answer]:
    legal = board.legal_moves
    return [f"bestmove {legal[0] if legal else 'none'}"]


class Scripted:
    """An engine that keeps the position it is sent (with the rules core) and answers
    ``go`` with ``policy``; ``isready`` with ``readyok`` unless ``ready`` is False."""

    def __init__(self, policy: Policy = first_legal, ready: bool = True) -> None:
        self.policy = policy
        self.ready = ready
        self.board = Board(GAME)
        self.gos = 0

    def __call__(self, line: str) -> Iterable[Answer]:
        words = line.split()
        if words[:1] == ["isready"]:
            return ["readyok"] if self.ready else []
        if words[:1] == ["position"]:
            self.board = self._board(words[1:])
            return []
        if words[:1] == ["go"]:
            self.gos += 1
            return self.policy(self.board)
        return []

    @staticmethod
    def _board(words: list[str]) -> Board:
        if words[0] == "startpos":
            board, rest = Board(GAME), words[1:]
        else:
            cut = words.index("moves") if "moves" in words else len(words)
            board, rest = Board.from_fen(GAME, " ".join(words[1:cut])), words[cut:]
        for move in rest[1:]:
            board.push_str(move)
        return board


def engine(name: str, script: Scripted) -> tuple[UgiEngine, FakeTransport]:
    fake = FakeTransport(name, script)
    return UgiEngine(fake), fake


def play(white: Scripted, black: Scripted, limits: Limits | None = None,
         timeouts: Timeouts | None = None) -> GameRecord:
    w, _ = engine("W", white)
    b, _ = engine("B", black)
    spec = GameSpec(GAME, timeouts=timeouts or Timeouts()).with_limits(limits or Limits())
    return asyncio.run(play_game(w, b, spec))


def on_ply(n: int, bad: Policy) -> Policy:
    """First legal moves, but ``bad`` on this engine's ``n``-th go (1-based)."""
    count = [0]

    def policy(board: Board) -> Iterable[Answer]:
        count[0] += 1
        return bad(board) if count[0] == n else first_legal(board)

    return policy


def replay(record: GameRecord) -> Board:
    board = Board(GAME) if record.start_fen is None else Board.from_fen(GAME, record.start_fen)
    for move in record.moves:
        board.push_str(move)
    return board


# -- the game loop ------------------------------------------------------------------------


def test_normal_game_ends_by_the_rules() -> None:
    rec = play(Scripted(), Scripted(), parse_limits({"tc": "10+0.1"}))
    board = replay(rec)
    outcome = board.outcome()
    assert outcome is not None
    assert (rec.result, rec.reason, rec.fault) == (outcome.result, Reason(outcome.reason), None)
    assert rec.final_fen == board.fen()
    assert len(rec.moves) == len(rec.elapsed_ms) == len(rec.clock_ms) > 0


def test_time_forfeit_when_the_reply_is_late() -> None:
    late = on_ply(2, lambda b: [Reply(f"bestmove {b.legal_moves[0]}", after_ms=180)])
    rec = play(Scripted(late), Scripted(), parse_limits({"st": "0.1"}))
    assert (rec.result, rec.reason, rec.fault) == ("0-1", Reason.TIME_FORFEIT, "w")
    assert "used 180 ms, 100 ms allowed" in rec.detail
    assert len(rec.moves) == 2  # White's first move and Black's reply were played


def test_stalled_when_no_reply_comes() -> None:
    silent = on_ply(1, lambda b: [])
    rec = play(Scripted(), Scripted(silent), parse_limits({"st": "0.01"}), timeouts=Timeouts(stall_grace=0.03))
    assert (rec.result, rec.reason, rec.fault) == ("1-0", Reason.STALLED, "b")
    assert "no bestmove within 0.040 s (10 ms allowed + 0.03 s grace)" in rec.detail


def test_stalled_without_a_clock_uses_the_move_timeout() -> None:
    silent = on_ply(1, lambda b: [])
    rec = play(Scripted(silent), Scripted(), parse_limits({"depth": "2"}), timeouts=Timeouts(move=0.03))
    assert (rec.reason, rec.fault) == (Reason.STALLED, "w")
    assert "(move timeout)" in rec.detail


def test_garbage_reply_is_a_protocol_error() -> None:
    rec = play(Scripted(on_ply(3, lambda b: ["bestmove @@garbage@@"])), Scripted())
    assert (rec.result, rec.reason, rec.fault) == ("0-1", Reason.PROTOCOL_ERROR, "w")
    assert "malformed 'bestmove @@garbage@@'" in rec.detail


def test_bestmove_without_a_move_is_a_protocol_error() -> None:
    rec = play(Scripted(), Scripted(on_ply(1, lambda b: ["bestmove"])))
    assert (rec.reason, rec.fault) == (Reason.PROTOCOL_ERROR, "b")
    assert "sent 'bestmove'" in rec.detail


def illegal_text(board: Board) -> str:
    """A well-formed move that the rules core says is not legal here."""
    legal = {str(m) for m in board.legal_moves}
    for a in range(1, 20):
        for b in range(1, 20):
            if a != b and f"{a}-{b}" not in legal:
                return f"{a}-{b}"
    raise AssertionError("no illegal step found")


def illegal_move(board: Board) -> list[Answer]:
    return [f"bestmove {illegal_text(board)}"]


def test_illegal_move() -> None:
    rec = play(Scripted(), Scripted(on_ply(2, illegal_move)))
    assert (rec.result, rec.reason, rec.fault) == ("1-0", Reason.ILLEGAL_MOVE, "b")
    assert "played illegal" in rec.detail
    assert rec.final_fen == replay(rec).fen()  # the illegal move was not played
    assert rec.detail.count(rec.final_fen) == 1 and "illegal move '" not in rec.detail  # once


@pytest.mark.parametrize("answer", [f"bestmove {'9' * 100_000}-12", f"bestmove {'@' * 100_000}",
                                    f"bestmove 1-{'2' * 100_000}"])
def test_a_huge_bad_move_is_clipped_in_the_games_detail(answer: str) -> None:
    """The detail goes into the PDN, the database and the report with every copy of the
    game: an engine's megabyte of move is shown as its first characters."""
    rec = play(Scripted(), Scripted(on_ply(1, lambda board: [answer])))
    assert rec.fault == "b" and rec.reason in (Reason.ILLEGAL_MOVE, Reason.PROTOCOL_ERROR)
    assert answer[9:30] in rec.detail and len(rec.detail) < 500, rec.detail[:600]


def test_bestmove_none_with_moves_is_illegal() -> None:
    rec = play(Scripted(on_ply(1, lambda b: ["bestmove none"])), Scripted())
    n = len(Board(GAME).legal_moves)
    assert (rec.reason, rec.fault) == (Reason.ILLEGAL_MOVE, "w")
    assert f"bestmove none with {n} legal moves" in rec.detail


def test_crash_during_search_is_a_disconnect() -> None:
    rec = play(Scripted(), Scripted(on_ply(2, lambda b: [Reply(close=True)])))
    assert (rec.result, rec.reason, rec.fault) == ("1-0", Reason.DISCONNECT, "b")


def test_flood_is_a_protocol_error() -> None:
    rec = play(Scripted(on_ply(1, lambda b: [Reply(flood=True)])), Scripted())
    assert (rec.reason, rec.fault) == (Reason.PROTOCOL_ERROR, "w")


def test_engine_not_ready_for_a_new_game() -> None:
    rec = play(Scripted(), Scripted(ready=False), timeouts=Timeouts(handshake=0.02))
    assert (rec.result, rec.reason, rec.fault) == ("1-0", Reason.STALLED, "b")
    assert "no readyok within 0.02 s after uginewgame" in rec.detail
    assert rec.moves == []


def test_engines_are_sent_the_game_position_by_position() -> None:
    w, wfake = engine("W", Scripted())
    b, bfake = engine("B", Scripted())
    spec = GameSpec(GAME, opening_moves=("13-12",)).with_limits(Limits(depth=1))
    rec = asyncio.run(play_game(w, b, spec))
    positions = [line for line in bfake.sent if line.startswith("position")]
    assert positions[0] == "position startpos moves 13-12"
    assert positions[1] == "position startpos moves " + " ".join(rec.moves[:3])
    assert wfake.sent[:2] == ["uginewgame", "isready"]
    assert all(line == "go depth 1" for line in wfake.sent if line.startswith("go"))


@pytest.mark.parametrize("spec", [
    GameSpec(GAME, start_fen="not a position"),
    GameSpec(GAME, opening_moves=("13-12", "13-12")),  # the second is no longer legal
])
def test_a_bad_start_is_refused_before_any_engine_is_touched(spec: GameSpec) -> None:
    w, wfake = engine("W", Scripted())
    b, bfake = engine("B", Scripted())
    with pytest.raises(RulesError):
        asyncio.run(play_game(w, b, spec.with_limits(Limits(depth=1))))
    assert wfake.sent == [] and bfake.sent == []


# -- the client ---------------------------------------------------------------------------


def handshake_script(variant: str | None) -> Callable[[str], list[Answer]]:
    def script(line: str) -> list[Answer]:
        if line == "ugi":
            opts = [] if variant is None else [
                f"option name UGI_Variant type combo default {variant} var {variant}"]
            return ["id name Fake", "id author Nobody", *opts,
                    "option name Hash type spin default 1 min 1 max 64", "ugiok"]
        return ["readyok"] if line == "isready" else []
    return script


def test_handshake_sets_options_and_the_game() -> None:
    fake = FakeTransport("F", handshake_script("pretwa"))
    cfg = EngineConfig(name="F", argv=[], options={"Hash": "8"})
    eng = UgiEngine(fake, cfg)
    asyncio.run(eng.handshake("pretwa", 1.0))
    assert (eng.id_name, eng.id_author) == ("Fake", "Nobody")
    assert set(eng.options) == {"ugi_variant", "hash"}
    assert fake.sent == ["ugi", "setoption name Hash value 8",
                         "setoption name UGI_Variant value pretwa", "isready"]


@pytest.mark.parametrize(("declared", "game"), [(None, "pretwa"), ("egara-guti", "pretwa")])
def test_handshake_refuses_a_game_the_engine_does_not_play(declared: str | None, game: str) -> None:
    eng = UgiEngine(FakeTransport("F", handshake_script(declared)))
    with pytest.raises(EngineStartError, match="does not play pretwa"):
        asyncio.run(eng.handshake(game, 1.0))


def test_a_variant_option_without_a_var_list_plays_its_default_only() -> None:
    """Not the protocol's combo, but read as ``guti check`` and the console read it: the
    engine plays the option's default, and a match of another game is refused."""
    def script(line: str) -> list[Answer]:
        if line == "ugi":
            return ["option name UGI_Variant type string default pretwa", "ugiok"]
        return ["readyok"] if line == "isready" else []

    with pytest.raises(EngineStartError, match="no var list, so it plays pretwa only"):
        asyncio.run(UgiEngine(FakeTransport("F", script)).handshake("egara-guti", 1.0))
    plays = UgiEngine(FakeTransport("F", script))
    asyncio.run(plays.handshake("pretwa", 1.0))
    assert plays.info.games() == ["pretwa"]


def test_handshake_timeout_is_a_start_failure() -> None:
    eng = UgiEngine(FakeTransport("F", lambda line: []))
    with pytest.raises(EngineStartError, match="no complete handshake"):
        asyncio.run(eng.handshake(GAME, 0.02))


def flooding_script(before_ugiok: list[str], before_readyok: list[str]):
    def script(line: str) -> list[Answer]:
        if line == "ugi":
            return [*before_ugiok, "option name UGI_Variant type combo default pretwa var pretwa",
                    "ugiok"]
        return [*before_readyok, "readyok"] if line == "isready" else []
    return script


def test_what_a_handshake_keeps_is_bounded_however_much_the_engine_says() -> None:
    """Lines before ``ugiok`` are noted as they come and those before ``readyok`` kept only
    as the last few: a flood there costs the referee no memory."""
    junk = [f"info string chatter {n}" for n in range(5 * options.MAX_OTHER_LINES)]
    flood = [f"info depth {n}" for n in range(20 * MAX_INFOS)]
    eng = UgiEngine(FakeTransport("F", flooding_script(junk, flood)))
    asyncio.run(eng.handshake("pretwa", 5.0))
    assert eng.info.other_lines == junk[-options.MAX_OTHER_LINES:]
    assert asyncio.run(eng.sync(5.0)) == flood[-MAX_INFOS:]


def test_an_engine_declaring_endless_options_is_a_start_failure() -> None:
    many = [f"option name O{n} type check default false" for n in range(options.MAX_OPTIONS + 1)]
    eng = UgiEngine(FakeTransport("F", flooding_script(many, [])))
    with pytest.raises(EngineStartError, match="more than 10,000 options"):
        asyncio.run(eng.handshake("pretwa", 30.0))


def test_read_until_timeout_keeps_the_lines_seen() -> None:
    eng = UgiEngine(FakeTransport("F", lambda line: ["info a", "info b"]))
    eng.send("hello")
    with pytest.raises(EngineTimeout) as caught:
        asyncio.run(eng.read_until(lambda line: line == "never", 0.02))
    assert caught.value.lines == ["info a", "info b"]


def test_go_reply_is_typed_and_timed() -> None:
    script: dict[str, list[Answer]] = {
        "go depth 3": ["info depth 1", Reply("bestmove 13-12 ponder 5-4", after_ms=42)]}
    eng = UgiEngine(FakeTransport("F", lambda line: script.get(line, [])))
    reply = asyncio.run(eng.go(Position(), Go(depth=3), 1.0))
    assert reply.bestmove == "13-12"
    assert reply.infos == ["info depth 1"]
    assert reply.elapsed_ms == pytest.approx(42)


def test_position_has_one_start_position_rule() -> None:
    board = Board(GAME)
    assert position_line(Position.of(board)) == "position startpos"
    board.push_str("13-12")
    assert position_line(Position.of(board)) == "position startpos moves 13-12"
    same_as_start = Board.from_fen(GAME, Board(GAME).fen())
    assert position_line(Position.of(same_as_start)) == "position startpos"
    other = Board.from_fen(GAME, board.fen())
    assert position_line(Position.of(other)) == f"position fen {board.fen()}"


def test_go_parse_and_arguments() -> None:
    assert Go.parse("depth 3 movetime 50").arguments() == "movetime 50 depth 3"
    assert Go.parse("").arguments() == "infinite"
    with pytest.raises(ValueError, match=r"^nodes \(a go parameter\): 9{19} is too large$"):
        Go.parse("nodes " + "9" * 19)
    with pytest.raises(ValueError, match=r"^nodes \(a go parameter\) needs a whole number >= 1$"):
        Go.parse("nodes 0")
    assert Go(perft=4).arguments() == "perft 4"
    with pytest.raises(ValueError, match="unknown go parameter 'wtime'"):
        Go.parse("wtime 100")
    with pytest.raises(ValueError, match="whole number"):
        Go.parse("depth x")
    for zero in ("depth", "nodes", "movestogo"):  # protocol.md: each >= 1
        with pytest.raises(ValueError, match=f"^{zero} \\(a go parameter\\) needs a whole "
                                             "number >= 1$"):
            Go.parse(f"{zero} 0")
    assert Go.parse("movetime 0").arguments() == "movetime 0"
    for twice in ("depth 1 depth 2", "infinite infinite"):
        with pytest.raises(ValueError, match="is given twice"):
            Go.parse(twice)


# -- the judge ----------------------------------------------------------------------------


def test_judge_in_order() -> None:
    board = Board(GAME)
    legal = str(board.legal_moves[0])
    assert judge_reply(board, legal).ok
    assert judge_reply(board, legal, 101, 100).fault is Fault.TIME
    assert judge_reply(board, None).fault is Fault.NO_MOVE
    assert judge_reply(board, "none").fault is Fault.NONE_WITH_MOVES
    assert judge_reply(board, "x1").fault is Fault.MALFORMED
    assert judge_reply(board, illegal_text(board)).fault is Fault.ILLEGAL
    over = Board.from_fen(GAME, "1b1b1/b1b/bbb/b/www/www/wwwww w 0 1")
    assert not over.legal_moves
    assert judge_reply(over, "none").ok and judge_reply(over, "none").move is None
    assert judge_reply(over, legal).fault is Fault.MOVE_WHEN_OVER


# -- one writer of each line --------------------------------------------------------------


@pytest.mark.parametrize("word", ["position", "go"])
def test_one_place_writes_each_command(word: str) -> None:
    pattern = re.compile(rf'f?"{word} ')
    places = [
        f"{path.relative_to(REFEREE)}:{n}"
        for path in sorted(REFEREE.rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert len(places) == 1, places
    assert places[0].startswith("ugi/lines.py:")


def test_elapsed_times_are_whole_nanoseconds_without_float_noise() -> None:
    """Two ``time.monotonic()`` readings a day into the machine's uptime differ by
    87,123 ns; their float difference carries noise in its last digits, the elapsed time
    kept (and stored as JSON every ply) does not."""
    sent = 86_400.902432
    received = sent + 0.000087123
    assert repr((received - sent) * 1000) != "0.087123"  # the noise this is about
    reply = GoReply.read(["bestmove 13-12"], sent, received)
    assert repr(reply.elapsed_ms) == "0.087123"
    assert repr(GoReply.read(["info depth 1", "bestmove 13-12"], sent, received).elapsed_ms) \
        == "0.087123"


def test_a_games_time_control_tag_follows_both_sides_limits() -> None:
    """The ``TimeControl`` tag is one time control when both sides have the same, else both."""
    a = parse_limits({"tc": "10+0.1"})
    b = parse_limits({"tc": "10+0.1"})
    assert game_start.time_control_tag(a, b) == "10+0.1"
    assert game_start.time_control_tag(parse_limits({"tc": "1+0"}), b) == "1:10+0.1"


def test_a_mistyped_option_lists_a_few_of_the_engines_thousands() -> None:
    declared = {f"o{n}": options.EngineOption(f"O{n}", "check", "false")
                for n in range(5000)}
    with pytest.raises(options.OptionValueError) as caught:
        options.checked_option_value(declared, "Nope", "1")
    message = str(caught.value)
    assert "no option 'Nope'" in message and "O0, O1," in message
    assert message.endswith("and 4,980 more)") and len(message) < 300


def test_what_an_engine_left_unended_is_quoted_only_when_it_looks_like_a_reply() -> None:
    """A reply word or a lone CR unended is quoted (escaped, cut with "..."); an ``info``
    line caught while still being written says nothing."""
    from guti.referee.process.errors import UNFINISHED_SHOWN
    from guti.referee.ugi.lines import unfinished_note

    assert unfinished_note(b"bestmove 16-12") == (
        '; its last output, "bestmove 16-12", has no newline after it')
    assert unfinished_note(b" readyok\r") == '; its last output, " readyok\\r", has no newline after it'
    assert unfinished_note(b"info depth 3 nodes 12") == ""
    assert unfinished_note(b"") == ""
    long = b"ugiok" + b"x" * UNFINISHED_SHOWN  # one byte more than shown
    assert unfinished_note(long) == (
        f'; its last output, "{long[:UNFINISHED_SHOWN].decode()}...", has no newline after it')
