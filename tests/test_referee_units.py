"""Pure-function parts of the referee: time controls and clocks, token and command-line
parsing, engine option lines, the reason vocabulary, PDN text, openings files."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from guti.referee.config.args import CliError, Kind, OptionSpec, parse_cli
from guti.referee.game.engine_config import EngineConfigError, engine_config_from_tokens
from guti.referee.game.limits import Limits, TimeControlError, parse_limits, parse_tc
from guti.referee.game.openings import (
    OpeningsError,
    load_openings,
    opening_sequence,
)
from guti.referee.game.pdn import PdnWriter, format_clock, format_game
from guti.referee.game.random_openings import random_openings
from guti.referee.game.reasons import Reason
from guti.referee.game.record import GameRecord
from guti.referee.game.timecontrol import Clock, go_for_turn
from guti.referee.process.engine_process import describe_exit
from guti.referee.ugi.go import Go
from guti.referee.ugi.lines import go_line
from guti.referee.ugi.options import parse_option_line
from guti.rules import Board

# -- time controls -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "base", "inc", "moves"),
    [
        ("40/60+0.5", 60000, 500, 40),
        ("60+0.5", 60000, 500, None),
        ("5+0.05", 5000, 50, None),
        ("0.5", 500, 0, None),
        ("1:30+1", 90000, 1000, None),
    ],
)
def test_parse_tc(text, base, inc, moves):
    lim = parse_tc(text)
    assert (lim.base_ms, lim.inc_ms, lim.moves_per_period) == (base, inc, moves)


def test_parse_tc_infinite_has_no_clock():
    assert not parse_tc("inf").has_clock and parse_tc("inf").is_unlimited()


@pytest.mark.parametrize("text", ["", "abc", "40/", "x/60", "0/60", "60+", "-5", "0", "nan", "1:",
                                  "0+0.1"])  # (the increment comes after a move)
def test_parse_tc_rejects(text):
    with pytest.raises(TimeControlError):
        parse_tc(text)


def test_parse_limits_combines_and_overrides():
    base = parse_limits({"tc": "10+0.1", "timemargin": "50"})
    lim = parse_limits({"depth": "4", "st": "0.25"}, base)
    assert (lim.base_ms, lim.inc_ms, lim.margin_ms, lim.depth, lim.movetime_ms) == (10000, 100, 50, 4, 250)
    for bad in ({"depth": "0"}, {"nodes": "x"}, {"timemargin": "-1"}, {"st": "0"}, {"speed": "1"}):
        with pytest.raises(TimeControlError):
            parse_limits(bad)


def test_clock_increment_margin_and_forfeit():
    clock = Clock(Limits(base_ms=1000, inc_ms=100, margin_ms=50))
    assert clock.allowed_ms() == 1050
    assert clock.charge(300)
    assert clock.remaining_ms == 800
    assert clock.charge(840)  # over the clock but inside the margin
    assert clock.remaining_ms == 100
    assert not clock.charge(151)


def test_clock_refills_each_period():
    clock = Clock(Limits(base_ms=1000, moves_per_period=2))
    assert clock.charge(400) and clock.remaining_ms == 600
    assert clock.charge(400) and clock.remaining_ms == 1200  # period over: +base
    assert clock.charge(100) and clock.remaining_ms == 1100


def test_movetime_limit_without_clock():
    clock = Clock(Limits(movetime_ms=200, margin_ms=10))
    assert clock.allowed_ms() == 210
    assert clock.charge(205) and not clock.charge(211)
    assert Clock(Limits(depth=3)).allowed_ms() is None


def test_go_for_turn():
    w = Clock(Limits(base_ms=5000, inc_ms=50))
    b = Clock(Limits(base_ms=5000, inc_ms=50))
    b.charge(1000)
    assert go_for_turn(b, w, b).arguments() == "p1time 5000 p1inc 50 p2time 4050 p2inc 50"
    depth = Clock(Limits(depth=3, nodes=100))
    assert go_for_turn(depth, depth, b).arguments() == "depth 3 nodes 100"
    movetime = Clock(Limits(movetime_ms=100))
    assert go_for_turn(movetime, movetime, b).arguments() == "movetime 100"
    unlimited = Clock(Limits())
    assert go_for_turn(unlimited, unlimited, b).arguments() == "infinite"


_figures = st.one_of(st.none(), st.integers(0, 10**7), st.sampled_from([9_876_543_211, 98_765_432_110]))
_limits = st.builds(
    Limits, base_ms=_figures, inc_ms=st.integers(0, 10**5), moves_per_period=st.one_of(st.none(), st.integers(1, 60)),
    movetime_ms=_figures, depth=st.one_of(st.none(), st.integers(1, 99)),
    nodes=st.one_of(st.none(), st.integers(1, 10**9)),  # -each nodes= is at least 1, as depth=
)


@given(_limits, _limits, st.floats(-50_000, 10**7), st.floats(-50_000, 10**7), st.integers(0, 70),
       st.booleans())
def test_go_lines_read_back_the_same(white, black, white_ms, black_ms, moved, black_moves):
    """The game loop's go line, for any limits and clocks, is a well-formed ``go``: its
    words read back as the same parameters, clocks in whole milliseconds, never negative."""
    w, b = Clock(white), Clock(black)
    w.remaining_ms, b.remaining_ms = white_ms, black_ms
    mover = b if black_moves else w
    mover.moves_in_period = moved
    go = go_for_turn(mover, w, b)
    line = go_line(go)
    assert line.startswith("go ")
    assert Go.parse(line[3:]).arguments() == go.arguments()
    for figure in (go.p1time, go.p2time, go.movestogo):
        assert figure is None or figure >= 0


def test_pdn_time_control_tag():
    assert parse_tc("40/60+0.5").pdn_time_control() == "40/60+0.5"
    assert parse_tc("5+0.05").pdn_time_control() == "5+0.05"
    assert Limits(movetime_ms=250).pdn_time_control() == "0.25/move"
    assert Limits(depth=5).pdn_time_control() == "-"


# -- engine tokens and the command line --------------------------------------------


def test_engine_tokens_with_each_and_shlex_args(tmp_path):
    cfg = engine_config_from_tokens(
        [("cmd", "/bin/echo"), ("args", "-x 'two words' --n=3"), ("name", "E"), ("option.Hash", "64"),
         ("dir", str(tmp_path)), ("restart", "on"), ("depth", "3")],
        each=[("tc", "5+0.05"), ("option.Hash", "16"), ("option.Threads", "1")],
    )
    assert cfg.argv == ["/bin/echo", "-x", "two words", "--n=3"]
    assert (cfg.name, cfg.cwd, cfg.restart) == ("E", str(tmp_path), True)
    assert cfg.options == {"Hash": "64", "Threads": "1"}
    assert cfg.limits == Limits(base_ms=5000, inc_ms=50, depth=3)


def test_engine_args_are_never_run_through_a_shell():
    cfg = engine_config_from_tokens([("cmd", "/bin/echo"), ("args", "$HOME; rm -rf / `x`")])
    assert cfg.argv[1:] == ["$HOME;", "rm", "-rf", "/", "`x`"]


@pytest.mark.parametrize(
    ("tokens", "needle"),
    [
        ([("name", "x")], "no cmd"),
        ([("cmd", "x"), ("colour", "red")], "unknown engine setting 'colour'"),
        ([("cmd", "x"), ("args", "'open")], "args="),
        ([("cmd", "x"), ("dir", "/no/such/dir")], "no such directory"),
        ([("cmd", "x"), ("restart", "maybe")], "expected on or off"),
        ([("cmd", "x"), ("tc", "fast")], "not a number"),
        ([("cmd", "x"), ("option.", "1")], "option name is empty"),
        ([("cmd", "x"), ("proto", "uci")], "only the ugi protocol"),
    ],
)
def test_engine_token_errors(tokens, needle):
    with pytest.raises(EngineConfigError) as info:
        engine_config_from_tokens(tokens)
    assert needle in str(info.value) and "\n" not in str(info.value)


SPECS = [
    OptionSpec("engine", Kind.TOKENS, repeatable=True),
    OptionSpec("games", Kind.VALUE),
    OptionSpec("fen", Kind.TEXT),
    OptionSpec("resume", Kind.FLAG),
    OptionSpec("pdnout", Kind.TOKENS, keys=frozenset({"file"}), bare_key="file"),
]


def test_parse_cli_single_and_double_dashes():
    args = parse_cli(
        ["-engine", "cmd=a", "name=A", "--engine", "cmd=b", "--games", "-3", "-fen", "x/y", "w", "0",
         "--resume", "-pdnout", "o.pdn"],
        SPECS,
    )
    assert args.token_groups("engine") == [[("cmd", "a"), ("name", "A")], [("cmd", "b")]]
    assert args.value("games") == "-3"  # a negative number is a value, not an option
    assert args.value("fen") == "x/y w 0"
    assert args.has("resume")
    assert args.token_dict("pdnout") == {"file": "o.pdn"}


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["-games", "1", "-games", "2"], "more than once"),
        (["-games"], "needs a value"),
        (["-games", "1", "2"], "one value"),
        (["-nope"], "unknown option"),
        (["x"], "unexpected argument"),
        (["-engine"], "needs key=value"),
        (["-engine", "cmd"], "not of the form key=value"),
        (["-pdnout", "mode=x"], "unknown key 'mode'"),
    ],
)
def test_parse_cli_errors(argv, needle):
    with pytest.raises(CliError) as info:
        parse_cli(argv, SPECS)
    assert needle in str(info.value)


# -- engine output -----------------------------------------------------------------


def test_option_lines():
    opt = parse_option_line("option name UGI_Variant type combo default egara-guti var egara-guti var pretwa")
    assert (opt.name, opt.type, opt.default, opt.vars) == ("UGI_Variant", "combo", "egara-guti", ["egara-guti", "pretwa"])
    opt = parse_option_line("option name Hash Size type spin default 16 min 1 max 1024")
    assert (opt.name, opt.min, opt.max) == ("Hash Size", "1", "1024")
    assert parse_option_line("option type spin") is None
    assert parse_option_line("option name X") is None


def test_describe_exit():
    assert describe_exit(3) == "exit code 3"
    assert describe_exit(-11) == "killed by signal 11 (SIGSEGV)"
    assert describe_exit(None) == "still running"


def test_reason_vocabulary_is_exactly_the_documented_one():
    assert [r.value for r in Reason] == [
        "no legal move", "three or fewer", "fifty plies", "repetition", "adjudication",
        "time forfeit", "illegal move", "protocol error", "disconnect", "stalled", "start failure",
        "resource limit",
    ]
    assert Reason.parse(" stalled ") is Reason.STALLED
    assert {r for r in Reason if r.is_rule} == {
        Reason.NO_LEGAL_MOVE, Reason.THREE_OR_FEWER, Reason.FIFTY_PLIES, Reason.REPETITION
    }
    with pytest.raises(ValueError):
        Reason.parse("resigned")


# -- PDN ---------------------------------------------------------------------------


def test_format_clock():
    assert format_clock(59500) == "0:00:59.500"
    assert format_clock(3723004) == "1:02:03.004"
    assert format_clock(-5) == "0:00:00.000"


def test_pdn_record_from_black_to_move_fen(tmp_path):
    record = GameRecord(
        game="egara-guti", white='Al "the" pha', black="Beta", start_fen="bbbbb/bbb/bbb/1/www/www/wwwww b 3 7",
        moves=["11-12", "17-11", "x"], elapsed_ms=[None, 12.0, 20.6], clock_ms=[None, 4988.0, None],
        opening_plies=1, result="1-0", reason=Reason.ILLEGAL_MOVE, detail="engine Beta played {bad}",
        fault="b", round="4", date="2024.05.01", time_control="5+0.05", first_side="b",
    )
    text = format_game(record)
    assert '[White "Al \\"the\\" pha"]' in text
    assert '[SetUp "1"]\n[FEN "bbbbb/bbb/bbb/1/www/www/wwwww b 3 7"]' in text
    assert '[Termination "illegal move"]' in text and '[PlyCount "3"]' in text
    movetext = text.split("\n\n", 1)[1]
    assert movetext.startswith("7... 11-12 {book} 8. 17-11 {[%emt 0.012] [%clk 0:00:04.988]} x {[%emt 0.021]}")
    assert movetext.rstrip().endswith("{engine Beta played (bad)} 1-0")
    path = tmp_path / "g.pdn"
    with PdnWriter(str(path)) as writer:
        writer.write(record)
    with PdnWriter(str(path)) as writer:  # appending keeps the first game intact
        writer.write(record)
    assert path.read_text() == text + "\n" + text


def test_a_game_started_at_midnight_is_dated_by_one_reading_of_the_clock(monkeypatch):
    # the clock ticks past midnight between two readings: the date and the time of one
    # game must still belong together (not 2026.12.31 with 00:00:00)
    import time

    from guti.referee.game.game_start import start_failure_record
    from guti.referee.game.settings import GameSpec
    from guti.rules import Result, Side

    real = time.strftime
    ticks = iter([time.struct_time((2026, 12, 31, 23, 59, 59, 3, 365, 0)),
                  time.struct_time((2027, 1, 1, 0, 0, 0, 4, 1, 0))])
    monkeypatch.setattr(time, "strftime", lambda fmt, *_: real(fmt, next(ticks)))
    record = start_failure_record(GameSpec("egara-guti"), "a", "b", Side.BLACK, "no start")
    assert (record.date, record.start_time) == ("2026.12.31", "23:59:59")
    # and the enums spelled as text (a stored row) are read back into the enums
    assert record.result is Result.WHITE_WINS and record.fault is Side.BLACK
    text = GameRecord(game="egara-guti", white="a", black="b", result="0-1", fault="w",
                      first_side="b")
    assert (text.result, text.fault, text.first_side) == (Result.BLACK_WINS, Side.WHITE, Side.BLACK)
    assert type(text.result) is Result and type(text.fault) is Side and type(text.first_side) is Side


# -- openings ----------------------------------------------------------------------


def test_settings_describe_each_scheduled_game():
    # the job's opening and round, the settings' tags, timeouts and adjudication; each side
    # plays with its engine's own limits, else the shared ones
    from guti.referee.game.game_start import start_failure_record
    from guti.referee.game.openings import Opening
    from guti.referee.game.scheduled import ScheduledGame
    from guti.referee.game.settings import Adjudication, GameSettings, Timeouts
    from guti.rules import Side

    shared, own = parse_limits({"tc": "10+0.1"}), parse_limits({"st": "0.5"})
    settings = GameSettings(limits=shared, timeouts=Timeouts(move=3.0), event="E", site="S",
                            adjudication=Adjudication(maxmoves=40))
    job = ScheduledGame(game_id=4, pair_id=2, round=3, white=0, black=1,
                        opening=Opening(None, ("13-12",)))
    spec = settings.spec_for(job, None, own)
    assert (spec.game, spec.start_fen, spec.opening_moves) == (settings.name, None, ("13-12",))
    assert (spec.white_limits, spec.black_limits) == (shared, own)
    assert (spec.round_tag, spec.event, spec.site) == ("3", "E", "S")
    assert spec.timeouts is settings.timeouts and spec.adjudication is settings.adjudication
    assert spec.with_limits(own).limits_of(Side.WHITE) == own
    # a game that could not start carries the same tags; its time control is the failed side's
    record = start_failure_record(spec, "a", "b", Side.BLACK, "no start")
    assert (record.round, record.event, record.site) == ("3", "E", "S")
    assert record.time_control == own.pdn_time_control()


def test_load_openings_reports_bad_lines_with_numbers(tmp_path):
    start = Board("egara-guti")
    m1 = str(start.legal_moves[0])
    start.push_str(m1)
    m2 = str(start.legal_moves[0])
    book = tmp_path / "book.txt"
    book.write_text(
        f"# header\n{m1} {m2}  # trailing comment\n1. {m1}\n"
        "bbbbb/bbb/bbb/1/www/www/wwwww b\n"
        "this is not an opening\nbbbbb/bbb/bbb/1/www/www/wwwww w 0 1 moves 1-2\n"
    )
    errors: list[str] = []
    found = load_openings(str(book), "egara-guti", on_error=errors.append)
    assert [(o.fen, o.moves) for o in found] == [
        (None, (m1, m2)),
        (None, (m1,)),
        ("bbbbb/bbb/bbb/1/www/www/wwwww b 0 1", ()),
    ]
    assert [e.split(": ")[0] for e in errors] == [f"{book}:5", f"{book}:6"]
    assert load_openings(str(book), "egara-guti", plies=1, on_error=errors.append)[0].moves == (m1,)


def test_load_openings_without_usable_lines(tmp_path):
    book = tmp_path / "empty.txt"
    book.write_text("# nothing\n")
    with pytest.raises(OpeningsError):
        load_openings(str(book), "pretwa")
    with pytest.raises(OpeningsError):
        load_openings(str(tmp_path / "missing.txt"), "pretwa")


def test_random_openings_are_legal_distinct_and_reproducible():
    first = random_openings("pretwa", 4, 6, seed=7)
    assert first == random_openings("pretwa", 4, 6, seed=7)
    assert len({o.moves for o in first}) == 6
    for opening in first:
        assert len(opening.moves) == 4
        board = opening.board("pretwa")
        assert not board.is_game_over()


def test_opening_sequence_orders():
    items = random_openings("egara-guti", 2, 3, seed=1)
    seq = opening_sequence(items, "sequential")
    assert [next(seq) for _ in range(4)] == [*items, items[0]]
    shuffled = opening_sequence(items, "random", seed=5)
    batch = [next(shuffled) for _ in range(3)]
    assert sorted(batch, key=str) == sorted(items, key=str)
    with pytest.raises(OpeningsError):
        next(opening_sequence(items, "backwards"))
