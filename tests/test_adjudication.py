"""Adjudication (``-draw``, ``-resign``, ``-maxmoves``): the pure rules ply by ply, then
through real ``guti match`` runs whose engines report scripted scores, read back from the
PDN; then the reference engine pair, whose games end earlier under adjudication.

Every rule is checked at the exact ply it must fire and at the one before it (never
earlier), with cutechess-cli's meaning (see :mod:`guti.referee.game.adjudication`)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from guti.referee.game.adjudication import Adjudicator, Ruling
from guti.referee.game.pdn_reader import PdnGame
from guti.referee.game.settings import Adjudication, DrawRule, ResignRule
from guti.referee.ugi.search_info import Score, SearchInfo
from guti.rules import Result, Side
from tests.conftest import GUTI, parse_pdn

SCRIPTED = str(Path(__file__).parent / "engines" / "scripted.py")


def cp(value: int) -> SearchInfo:
    return SearchInfo(score=Score("cp", value), depth=1)


def win(plies: int) -> SearchInfo:
    return SearchInfo(score=Score("win", plies), depth=1)


def loss(plies: int) -> SearchInfo:
    return SearchInfo(score=Score("loss", plies), depth=1)


NO_SCORE = SearchInfo(depth=5, nodes=100)  # an info line without a score


def feed(rules: Adjudication, plies: list[SearchInfo | None], captures: frozenset[int] = frozenset(),
         first: Side = Side.WHITE, before: int = 0) -> tuple[int, Ruling] | None:
    """Feed the plies (alternating sides from ``first``, ``before`` book plies already
    played); the 1-based ply of the game at which a ruling came, with it, or None."""
    judge = Adjudicator(rules)
    side = first
    for i, search in enumerate(plies, 1):
        ruling = judge.after_ply(side, search, i in captures, before + i)
        if ruling is not None:
            return before + i, ruling
        side = side.other
    return None


# -- -draw -----------------------------------------------------------------------------------

DRAW = Adjudication(draw=DrawRule(movenumber=10, movecount=4, score=20))


def test_draw_fires_after_movecount_moves_each_once_movenumber_is_reached():
    # Scores within 20 from the start: 8 plies are enough from ply 8 on, but move 10
    # (ply 20) is not reached before: the draw comes at ply 20 exactly.
    got = feed(DRAW, [cp(5), cp(-20)] * 15)
    assert got is not None and got[0] == 20
    assert got[1].result is Result.DRAW and got[1].rule == "draw"
    assert got[1].detail == ("draw adjudication: scores within 20 cp for 4 moves each after "
                             "move 10 (at ply 20, the last 8 scores from -20 to +5 cp)")
    assert feed(DRAW, [cp(5), cp(-20)] * 9 + [cp(5)]) is None  # up to ply 19


def test_draw_needs_consecutive_scores_within_the_bound():
    plies = [cp(0)] * 15 + [cp(21)] + [cp(0)] * 20  # ply 16 is outside: the count restarts
    got = feed(DRAW, plies)
    assert got is not None and got[0] == 24  # plies 17..24 are the 8 in a row
    assert feed(DRAW, plies[:23]) is None


def test_a_capture_restarts_the_draw_count_and_counts_itself():
    plies = [cp(0)] * 40
    got = feed(DRAW, plies, captures=frozenset({18}))
    assert got is not None and got[0] == 25  # plies 18..25: the capture ply is the first
    assert feed(DRAW, plies[:24], captures=frozenset({18})) is None


def test_decisive_and_missing_scores_are_never_within_the_draw_bound():
    for breaker in (win(9), loss(9), NO_SCORE, None):
        plies: list[SearchInfo | None] = [cp(0)] * 15 + [breaker] + [cp(0)] * 20
        got = feed(DRAW, plies)
        assert got is not None and got[0] == 24, breaker


def test_draw_move_number_counts_book_plies():
    # Six book plies before: ply 20 of the game is the 14th fed ply.
    got = feed(DRAW, [cp(0)] * 30, before=6)
    assert got is not None and got[0] == 20


# -- -resign ---------------------------------------------------------------------------------

RESIGN = Adjudication(resign=ResignRule(movecount=3, score=500))


def test_resign_after_movecount_consecutive_moves_at_or_below_minus_score():
    # White's scores: 0, -500, -700, -501 (its plies 1, 3, 5, 7): it loses at ply 7.
    plies = [cp(0), cp(0), cp(-500), cp(600), cp(-700), cp(600), cp(-501), cp(600)]
    got = feed(RESIGN, plies)
    assert got is not None and got[0] == 7
    assert got[1].result is Result.BLACK_WINS and got[1].rule == "resign"
    assert got[1].detail == ("resign adjudication: White's score at or below -500 cp for 3 "
                             "moves (-500 -700 -501)")
    assert feed(RESIGN, plies[:6]) is None


def test_a_forced_loss_counts_as_losing_and_a_forced_win_does_not():
    plies = [cp(0), cp(-600), cp(0), loss(7), cp(0), cp(-600)]
    got = feed(RESIGN, plies)
    assert got is not None and got[0] == 6 and got[1].result is Result.WHITE_WINS
    assert "(-600 loss 7 -600)" in got[1].detail
    assert feed(RESIGN, [cp(0), win(3)] * 10) is None


def test_an_engine_without_a_score_is_never_resigned():
    # Black's 3rd go reports no score: its count starts again; it loses at its 6th go.
    plies = [cp(0), cp(-600), cp(0), cp(-600), cp(0), NO_SCORE, cp(0), cp(-600),
             cp(0), cp(-600), cp(0), cp(-600)]
    got = feed(RESIGN, plies)
    assert got is not None and got[0] == 12
    assert feed(RESIGN, [cp(900), None] * 30) is None  # a silent engine: never


def test_two_sided_resign_waits_for_the_opponent_to_agree():
    rules = Adjudication(resign=ResignRule(movecount=3, score=500, twosided=True))
    # Black is lost from its first move; White sees its win only from its 3rd move on.
    plies = [cp(0), cp(-600), cp(100), cp(-600), cp(500), cp(-600), cp(600), cp(-600),
             cp(700), cp(-600)]
    got = feed(rules, plies)
    # White's 3 winning scores are complete at ply 9; Black's move (ply 10) decides.
    assert got is not None and got[0] == 10 and got[1].result is Result.WHITE_WINS
    assert got[1].detail.endswith("; White's at or above +500 cp for 3 moves (+500 +600 +700)")
    assert feed(rules, plies[:9]) is None
    one_sided = feed(RESIGN, plies)
    assert one_sided is not None and one_sided[0] == 6  # without twosided: Black's 3rd move


def test_two_sided_resign_against_a_silent_opponent_never_fires():
    rules = Adjudication(resign=ResignRule(movecount=2, score=100, twosided=True))
    assert feed(rules, [None, cp(-900)] * 30) is None


def test_resign_from_black_first():
    got = feed(RESIGN, [cp(-600), cp(0)] * 5, first=Side.BLACK)
    assert got is not None and got[0] == 5 and got[1].result is Result.WHITE_WINS


# -- -maxmoves and the order of the rules -------------------------------------------------------


def test_maxmoves_draws_at_twice_n_plies_without_any_score():
    rules = Adjudication(maxmoves=12)
    got = feed(rules, [None] * 40)
    assert got is not None and got[0] == 24 and got[1].result is Result.DRAW
    assert got[1].detail == "maxmoves adjudication: 24 plies played, the limit is 12 moves"
    assert feed(rules, [None] * 23) is None
    assert feed(rules, [None] * 10, before=14) is not None  # book plies count


def test_draw_comes_before_resign_before_maxmoves():
    # At ply 2 all three rules hold (Black's -5 is a resign score too).
    rules = Adjudication(draw=DrawRule(0, 1, 1000), resign=ResignRule(1, 0), maxmoves=1)
    got = feed(rules, [cp(5), cp(-5)])
    assert got is not None and got[0] == 2 and got[1].rule == "draw"
    rules = Adjudication(resign=ResignRule(1, 0), maxmoves=1)
    got = feed(rules, [cp(5), cp(-5)])
    assert got is not None and got[0] == 2 and got[1].rule == "resign"
    got = feed(Adjudication(maxmoves=1), [cp(5), cp(-5)])
    assert got is not None and got[0] == 2 and got[1].rule == "maxmoves"


def test_no_rules_never_rule():
    assert not Adjudication().active
    assert feed(Adjudication(), [cp(-10_000)] * 500) is None


# -- real matches: scripted engines, read back from the PDN ------------------------------------


def scripted(name: str, scores: str) -> list[str]:
    return ["-engine", f"cmd={sys.executable}", f"args={SCRIPTED} --scores {scores} --name {name}",
            f"name={name}"]


def play(tmp_path: Path, white: str, black: str, *flags: str, game: str = "alquerque") -> PdnGame:
    """One ``guti match`` game of two scripted engines (White's and Black's score scripts)."""
    pdn = tmp_path / f"game{len(list(tmp_path.glob('*.pdn')))}.pdn"
    proc = subprocess.run(
        [*GUTI, "match", *scripted("W", white), *scripted("B", black), "-each", "depth=1",
         "-game", game, "-games", "1", "-pdnout", str(pdn), *flags],
        capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    [record] = parse_pdn(pdn.read_text())
    return record


def first_draw_ply(moves: list[str], movenumber: int, movecount: int,
                   breaks: frozenset[int] = frozenset()) -> int | None:
    """Where -draw must fire in a game whose scores are all within the bound except on the
    plies in ``breaks``: the first ply from move ``movenumber`` on that ends 2*movecount
    plies in a row with a good score, a capture (``x`` in the move) starting a new row."""
    row = 0
    for ply, move in enumerate(moves, 1):
        row = 0 if ply in breaks else 1 if "x" in move else row + 1
        if ply // 2 >= movenumber and row >= 2 * movecount:
            return ply
    return None


def assert_adjudicated(game: PdnGame, baseline: PdnGame, ply: int, result: str) -> None:
    """Ended by adjudication at ``ply`` exactly, with ``result``, having played the same
    moves as the game without adjudication, which went on past that ply."""
    assert game.tags["Termination"] == "adjudication"
    assert game.tags["PlyCount"] == str(ply) and len(game.moves) == ply
    assert game.result == result == game.tags["Result"]
    assert baseline.tags["Termination"] != "adjudication"
    assert len(baseline.moves) > ply, "the game without adjudication must go on past it"
    assert game.move_texts == baseline.move_texts[:ply]


def test_draw_adjudication_in_a_real_match_at_the_exact_ply(tmp_path):
    baseline = play(tmp_path, "cp:0", "cp:0")
    flags = ("-draw", "movenumber=20", "movecount=10", "score=10")
    expected = first_draw_ply(baseline.move_texts, 20, 10)
    assert expected is not None
    game = play(tmp_path, "cp:0", "cp:-10", *flags)  # 10 is within 10
    assert_adjudicated(game, baseline, expected, "1/2-1/2")
    assert game.notes == [f"draw adjudication: scores within 10 cp for 10 moves each after move"
                          f" 20 (at ply {expected}, the last 20 scores from -10 to +0 cp)"]
    # White's 15th score (ply 29) is 11 cp: outside, so the row starts again after it.
    broken = first_draw_ply(baseline.move_texts, 20, 10, breaks=frozenset({29}))
    assert broken is not None and broken > expected
    game = play(tmp_path, "cp:0*14,cp:11,cp:0", "cp:0", *flags)
    assert_adjudicated(game, baseline, broken, "1/2-1/2")


def test_resign_adjudication_in_a_real_match_at_the_exact_ply(tmp_path):
    baseline = play(tmp_path, "cp:0", "silent")
    # Black's goes 6-7 are lost, 8 is not, 9-11 are (the 11th a forced loss): Black's 11th
    # move is ply 22.
    game = play(tmp_path, "cp:0", "cp:0*5,cp:-600*2,cp:0,cp:-500*2,loss:4",
                "-resign", "movecount=3", "score=500")
    assert_adjudicated(game, baseline, 22, "1-0")
    assert game.notes == ["resign adjudication: Black's score at or below -500 cp for 3 moves"
                          " (-500 -500 loss 4)"]


@pytest.mark.slow  # a real match or two runs: seconds; in the slow tier
def test_two_sided_resign_and_a_silent_engine_in_a_real_match(tmp_path):
    baseline = play(tmp_path, "silent", "silent")
    flags = ("-resign", "movecount=3", "score=500", "twosided=true")
    # Black is lost from the start; White reports no score for 4 moves, then +600: its 3rd
    # such move is ply 13, and Black's next move (ply 14) is adjudicated.
    game = play(tmp_path, "silent*4,cp:600", "cp:-600", *flags)
    assert_adjudicated(game, baseline, 14, "1-0")
    assert game.notes[0].endswith("; White's at or above +500 cp for 3 moves (+600 +600 +600)")
    # An opponent that never reports a score never agrees: the rules end the game.
    game = play(tmp_path, "silent", "cp:-600", *flags)
    assert game.tags["Termination"] == baseline.tags["Termination"] != "adjudication"
    assert game.move_texts == baseline.move_texts
    # One-sided, a silent engine is never resigned, however its opponent scores.
    game = play(tmp_path, "cp:900", "silent", "-resign", "movecount=1", "score=0")
    assert game.move_texts == baseline.move_texts


def test_maxmoves_in_a_real_match_counts_book_plies_and_needs_no_score(tmp_path):
    opening = ("-openings", "plies=4", "-srand", "6")  # a long game
    baseline = play(tmp_path, "silent", "silent", *opening)
    assert [m.comments for m in baseline.moves[:4]] == [["book"]] * 4
    game = play(tmp_path, "silent", "silent", *opening, "-maxmoves", "15")
    assert_adjudicated(game, baseline, 30, "1/2-1/2")
    assert game.notes == ["maxmoves adjudication: 30 plies played, the limit is 15 moves"]


@pytest.mark.slow  # a real match or two runs: seconds; in the slow tier
def test_the_rules_come_before_adjudication(tmp_path):
    baseline = play(tmp_path, "silent", "silent", game="egara-guti")
    last = len(baseline.moves)
    assert last % 2 == 0  # so that -maxmoves can fall on the very ply the rules end it
    game = play(tmp_path, "silent", "silent", "-maxmoves", str(last // 2), game="egara-guti")
    assert game.tags["Termination"] == baseline.tags["Termination"] != "adjudication"
    assert game.move_texts == baseline.move_texts
    game = play(tmp_path, "silent", "silent", "-maxmoves", str(last // 2 - 1), game="egara-guti")
    assert game.tags["Termination"] == "adjudication" and len(game.moves) == last - 2


# -- the flags: mistakes, help, TOML, a tournament's standings and database ----------------------


@pytest.mark.parametrize("command", ["match", "tournament"])
@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["-draw", "movenumber=40", "movecount=8"], "-draw: missing score=N"),
        (["-draw", "movenumber=x", "movecount=8", "score=10"],
         "-draw movenumber=x: not a whole number >= 0"),
        (["-draw", "movenumber=40", "movecount=0", "score=10"],
         "-draw movecount=0: must be at least 1"),
        (["-draw", "movenumber=40", "movecount=8", "score=-5"],
         "-draw score=-5: not a whole number >= 0"),
        (["-draw", "moves=3"], "-draw: unknown key 'moves'"),
        (["-draw"], "-draw needs key=value settings"),
        (["-resign", "score=500"], "-resign: missing movecount=N"),
        (["-resign", "movecount=3", "score=5e2"], "-resign score=5e2: not a whole number >= 0"),
        (["-resign", "movecount=3", "score=500", "twosided=maybe"],
         "-resign twosided=maybe: expected true or false"),
        (["-maxmoves", "-3"], "-maxmoves: -3 is less than 0"),
        (["-maxmoves", "ten"], "-maxmoves: 'ten' is not a whole number"),
    ],
)
def test_a_bad_adjudication_value_is_one_line_naming_the_flag_and_exit_2(tmp_path, command,
                                                                          flags, message):
    done = subprocess.run(
        [*GUTI, command, *scripted("W", "cp:0"), *scripted("B", "cp:0"), "-each", "depth=1",
         *flags], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and message in done.stderr, done.stderr
    assert not list(tmp_path.iterdir()), "nothing is played or written"


def test_help_lists_the_adjudication_flags_with_their_keys_and_defaults():
    for command in ("match", "tournament"):
        lines = subprocess.run([*GUTI, command, "--help"], capture_output=True, text=True,
                               timeout=60).stdout.splitlines()
        found = {line.split()[0]: line for line in lines if line.startswith("  -")}
        assert "movenumber=N movecount=C score=S" in found["-draw"]
        assert "(default off)" in found["-draw"]
        assert "movecount=C score=S [twosided=true]" in found["-resign"]
        assert "default off" in found["-resign"]
        assert "full moves (default 0: no limit)" in found["-maxmoves"]


def test_tournament_from_toml_counts_adjudications_in_standings_database_and_export(tmp_path):
    config = tmp_path / "t.toml"
    config.write_text(f"""
game = "alquerque"
games = 2
concurrency = 1
db = "adj.db"
maxmoves = 15
[each]
depth = 1
[resign]
movecount = 3
score = 500
twosided = false
[[engine]]
name = "Hopeful"
cmd = "{{python}}"
args = ["{SCRIPTED}", "--scores", "cp:0"]
[[engine]]
name = "Gloomy"
cmd = "{{python}}"
args = ["{SCRIPTED}", "--scores", "cp:-600"]
""")
    done = subprocess.run([*GUTI, "tournament", str(config)], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(tmp_path / "adj.db") as db:
        stored = db.execute("SELECT white, result, reason, detail, fault FROM games"
                            " ORDER BY game_id").fetchall()
    # Gloomy resigns on its 3rd move: ply 6 as Black, ply 5 as White.
    assert stored == [
        ("Hopeful", "1-0", "adjudication", "resign adjudication: Black's score at or below -500"
         " cp for 3 moves (-600 -600 -600)", None),
        ("Gloomy", "0-1", "adjudication", "resign adjudication: White's score at or below -500"
         " cp for 3 moves (-600 -600 -600)", None),
    ]
    table = subprocess.run([*GUTI, "standings", "adj.db"], capture_output=True, text=True,
                           timeout=60, cwd=tmp_path).stdout
    head = next(line for line in table.splitlines() if "adjud" in line and "rules" in line)
    columns = [cell.strip() for cell in head.split("┃")]
    for name in ("Hopeful", "Gloomy"):
        row = [cell.strip() for cell in next(
            line for line in table.splitlines() if f"│ {name} " in line).split("│")]
        assert row[columns.index("adjud")] == "2" and row[columns.index("rules")] == "0"
        assert all(row[columns.index(c)] == "0" for c in ("time", "illegal", "crash"))
    export = subprocess.run([*GUTI, "export", "adj.db", "-json", "g.json", "-pdn", "g.pdn"],
                            capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert export.returncode == 0, export.stderr
    exported = json.loads((tmp_path / "g.json").read_text())
    assert [(g["reason"], g["detail"]) for g in exported] == [s[2:4] for s in stored]
    games = parse_pdn((tmp_path / "g.pdn").read_text())
    assert [(g.tags["Termination"], g.tags["PlyCount"], g.notes) for g in games] == [
        ("adjudication", "6", [stored[0][3]]), ("adjudication", "5", [stored[1][3]])]
    # The flag on the command line wins over the file's; other rules make another tournament.
    other = subprocess.run([*GUTI, "tournament", str(config), "-maxmoves", "2", "-resume"],
                           capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert other.returncode == 2 and "different tournament" in other.stderr
    short = subprocess.run([*GUTI, "tournament", str(config), "-maxmoves", "2", "-db", "b.db"],
                           capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert short.returncode == 0, short.stderr
    assert short.stdout.count("(adjudication, 4 plies) - maxmoves adjudication") == 2


# -- the reference engine pair ---------------------------------------------------------------------


def reference_match(tmp_path: Path, name: str, *flags: str) -> tuple[list[PdnGame], str]:
    """Two games of the reference engine at depth 4 against itself at depth 1 (a depth
    limit: the same games on a loaded machine); the PDN and the traffic log."""
    pdn, log = tmp_path / f"{name}.pdn", tmp_path / f"{name}.log"
    done = subprocess.run(
        [*GUTI, "match", "-engine", f"cmd={sys.executable}", "args=-m guti.engine", "name=Deep",
         "depth=4", "-engine", f"cmd={sys.executable}", "args=-m guti.engine", "name=Shallow",
         "depth=1", "-games", "2", "-pdnout", str(pdn), "-log", str(log), *flags],
        capture_output=True, text=True, timeout=300, cwd=Path(__file__).parents[1])
    assert done.returncode == 0, done.stderr
    return parse_pdn(pdn.read_text()), log.read_text()


def logged_scores(log: str) -> list[list[int | None]]:
    """Per game, per ply: the cp score of the last ``info`` before the ``bestmove``, read
    from the traffic log (not from the referee's records)."""
    games: list[list[int | None]] = []
    last: int | None = None
    for line in log.splitlines():
        if "[referee] # game" in line and "(white) vs" in line:
            games.append([])
        elif "> go" in line:
            last = None
        elif "< info" in line and " score cp " in line:
            last = int(line.split(" score cp ")[1].split()[0])
        elif "< bestmove" in line:
            games[-1].append(last)
    return games


def test_reference_engines_end_earlier_under_draw_and_resign_adjudication(tmp_path):
    plain, _ = reference_match(tmp_path, "plain")
    judged, log = reference_match(tmp_path, "judged", "-draw", "movenumber=8", "movecount=3",
                                  "score=20", "-resign", "movecount=2", "score=150")
    scores = logged_scores(log)
    rules = {g.tags["Termination"] for g in judged if g.tags["Termination"] != "adjudication"}
    assert not rules and {g.tags["Termination"] for g in plain} & {"adjudication"} == set()
    seen = set()
    for before, game, played in zip(plain, judged, scores, strict=True):
        plies = len(game.moves)
        assert plies < len(before.moves) and game.move_texts == before.move_texts[:plies]
        assert len(played) == plies
        [note] = game.notes
        if note.startswith("draw adjudication"):
            seen.add("draw")
            assert game.result == "1/2-1/2" and plies // 2 >= 8
            last = [s for s in played[-6:] if s is not None]
            assert len(last) == 6 and all(abs(s) <= 20 for s in last)
            assert note.endswith(f"from {min(last):+d} to {max(last):+d} cp)")
        else:
            seen.add("resign")
            loser = "White" if plies % 2 == 1 else "Black"  # no opening: White plays ply 1
            assert note.startswith(f"resign adjudication: {loser}'s score at or below -150")
            assert game.result == ("0-1" if loser == "White" else "1-0")
            own = played[-1::-2][:2][::-1]  # the loser's last two moves
            assert all(s is not None and s <= -150 for s in own)
            assert note.endswith("(" + " ".join(f"{s:+d}" for s in own) + ")")
    assert seen == {"draw", "resign"}


def test_every_reason_is_documented_in_protocol_md_and_the_user_guide():
    from guti.referee.game.reasons import Reason

    root = Path(__file__).parents[1]
    protocol = (root / "protocol.md").read_text()
    matches = (root / "docs" / "guide" / "matches.md").read_text()
    adjudication = (root / "docs" / "guide" / "adjudication.md").read_text()
    for reason in Reason:
        assert f"| `{reason}` |" in protocol, reason
        assert f"| `{reason}` |" in matches, reason
    for flag in ("-draw movenumber=N movecount=C score=S", "-resign movecount=C score=S",
                 "-maxmoves N"):
        assert flag in protocol and flag in adjudication, flag


def test_standings_count_adjudications_apart_from_rule_endings_and_faults():
    from guti.referee.stats.standings import Standings

    table = Standings(["a", "b", "c"])
    table.add(0, 1, "1-0", "adjudication", None)
    table.add(1, 2, "1/2-1/2", "adjudication", None)
    table.add(2, 0, "0-1", "repetition", None)
    table.add(0, 2, "1-0", "time forfeit", "b")
    lines = {line.name: line for line in table.lines}
    assert [lines[n].adjudications for n in "abc"] == [1, 2, 1]
    assert [lines[n].rules for n in "abc"] == [1, 0, 1]
    assert lines["c"].faults["time"] == 1 and sum(lines["a"].faults.values()) == 0
    assert (lines["a"].wins, lines["b"].draws, lines["b"].losses) == (3, 1, 1)
