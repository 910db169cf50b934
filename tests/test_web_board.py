"""SVG boards, the report's data and its safety, checked without a browser.

The pictures are parsed as XML and counted: points, pieces by colour (against the FEN's
letters and the rules' ``Board.piece_at``), lines (straight ones and rings), the last move
and captured points. The report is built from a real tournament run through ``guti
tournament``; its embedded JSON is read back and compared with the database.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from guti.referee.storage.store import TournamentStore
from guti.referee.web.geometry import board_geometry, circle_of
from guti.referee.web.report import script_json
from guti.referee.web.svg import Marks, board_svg, replay
from guti.rules import GAMES
from tests.conftest import BOTS_DIR, GUTI, ROOT

NS = {"s": "http://www.w3.org/2000/svg"}
INJECTION = "<script>alert(1)</script>"


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def classes(root: ET.Element, name: str) -> list[ET.Element]:
    return [e for e in root.iter() if name in (e.get("class") or "").split()]


def fen_letters(fen: str) -> tuple[int, int]:
    cells = fen.split()[0]
    return cells.count("w"), cells.count("b")


# Positions: the start, a few plies in (with a capture where the game has one early), and a
# FEN given directly.
POSITIONS = [
    ("egara-guti", None, []),
    ("egara-guti", None, ["13-12", "11x13"]),
    ("egara-guti", "5/3/1w1/1/2w/www/2www b 0 14", []),
    ("pretwa", None, []),
    ("pretwa", None, ["6-1", "3x6"]),
    ("alquerque", None, ["14-13", "12x14"]),
]


@pytest.mark.parametrize(("game", "fen", "moves"), POSITIONS)
def test_svg_board_shows_the_position(game: str, fen: str | None, moves: list[str]) -> None:
    board, last = replay(game, fen, moves)
    marks = Marks(last.path if last else (), last.captured if last else ())
    root = parse(board_svg(game, board.fen(), marks))
    size = GAMES[game].geometry.size
    points = classes(root, "point")
    assert sorted(int(p.get("data-point") or 0) for p in points) == list(range(1, size + 1))
    white, black = classes(root, "white"), classes(root, "black")
    assert (len(white), len(black)) == fen_letters(board.fen())
    where = {p.get("data-point"): (p.get("cx"), p.get("cy")) for p in points}
    for piece in white + black:
        point = int(piece.get("data-point") or 0)
        colour = "white" if "white" in (piece.get("class") or "") else "black"
        assert board.piece_at(point) == ("w" if colour == "white" else "b")
        assert (piece.get("cx"), piece.get("cy")) == where[str(point)]
    assert len(classes(root, "label")) == size
    drawn = classes(root, "line") + classes(root, "ring")
    assert len(drawn) == len(GAMES[game].geometry.lines)
    if last is not None and last.is_capture:
        assert {int(c.get("data-point") or 0) for c in classes(root, "captured")} == set(last.captured)
        assert len(classes(root, "last-move")) == 1
        assert all(board.piece_at(p) is None for p in last.captured)


def test_circle_games_draw_their_rings_as_circles() -> None:
    """Pretwa's three circles (protocol.md) and Gol-skuish's seven are circles, centred on
    point 1, with radii 1, 2, 3...; the straight lines are not."""
    for game, rings in (("pretwa", 3), ("gol-skuish", 7)):
        root = parse(board_svg(game))
        found = classes(root, "ring")
        assert len(found) == rings
        centre = next(p for p in classes(root, "point") if p.get("data-point") == "1")
        assert {(r.get("cx"), r.get("cy")) for r in found} == {(centre.get("cx"), centre.get("cy"))}
        assert sorted(float(r.get("r") or 0) for r in found) == [float(k) for k in range(1, rings + 1)]
    assert circle_of([(0, 0), (1, 1), (2, 2)]) is None
    assert circle_of([(1, 0), (0, 1), (-1, 0), (0.5, -0.5)]) is None


def test_no_numbers_when_asked() -> None:
    assert not classes(parse(board_svg("egara-guti", marks=Marks(numbers=False))), "label")


def test_jump_table_names_one_captured_point_per_jump() -> None:
    """The page replays captures with ``from,to -> over``: that must be unambiguous."""
    for game in GAMES:
        jumps = board_geometry(game)["jumps"]
        pairs = [(a, c) for a, _, c in jumps]
        assert len(pairs) == len(set(pairs)), game


def test_guti_board_writes_an_svg(tmp_path: Path) -> None:
    out = tmp_path / "b.svg"
    done = subprocess.run([*GUTI, "board", "-game", "pretwa", "-moves", "6-1", "3x6", "-svg", str(out)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    root = parse(out.read_text())
    assert len(classes(root, "captured")) == 1
    assert root.get("data-game") == "pretwa"
    # Move numbers as an openings line or a PDN game writes them, glued or not: left out.
    numbered = subprocess.run([*GUTI, "board", "-game", "pretwa", "-moves", "1.6-1", "1...",
                               "3x6", "-svg", str(tmp_path / "n.svg")],
                              capture_output=True, text=True, timeout=60)
    assert numbered.returncode == 0, numbered.stderr
    assert numbered.stdout.split()[:-3] == done.stdout.split()[:-3]  # the same FEN
    assert (tmp_path / "n.svg").read_text() == out.read_text()
    bad = subprocess.run([*GUTI, "board", "-moves", "1-2", "-svg", str(out)],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "illegal move '1-2'" in bad.stderr


def test_guti_board_never_leaves_a_half_written_picture(tmp_path: Path) -> None:
    """The picture is written whole (``FILE.tmp`` renamed over ``FILE``): a write that
    fails (a file-size limit) leaves the old file as it was, and says which file, with the
    exit status of a fault of the machine."""
    import resource

    keep = tmp_path / "keep.svg"
    keep.write_text("old\n")

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))

    # (the bytecode cache not written under the limit: a cut-short .pyc would stay there)
    done = subprocess.run([*GUTI, "board", "-game", "gol-skuish", "-svg", str(keep)],
                          capture_output=True, text=True, timeout=60, preexec_fn=small_files,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    assert done.returncode == 1 and done.stderr == f"guti board: {keep}: File too large\n"
    assert keep.read_text() == "old\n" and not (tmp_path / "keep.svg.tmp").exists()
    # What it says of a path with control characters in it is escaped, as its errors are.
    odd = tmp_path / "y\x1b[31m.svg"
    shown = subprocess.run([*GUTI, "board", "-svg", str(odd)], capture_output=True, text=True,
                           timeout=60)
    assert shown.returncode == 0 and odd.exists(), shown.stderr
    assert "\x1b" not in shown.stdout and "y\\x1b[31m.svg" in shown.stdout


def test_script_json_cannot_close_the_script_element() -> None:
    text = script_json({"name": INJECTION + "</script><!--&\u2028"})
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text)["name"] == INJECTION + "</script><!--&\u2028"


def run_tournament(tmp_path: Path, *extra: str, engines: int = 2) -> subprocess.CompletedProcess[str]:
    """A real small tournament through ``guti tournament``: the reference engine against
    the random bot named like a script, and the greedy bot when ``engines`` is 3."""
    argv = [*GUTI, "tournament",
            "-engine", f"cmd={sys.executable}", "args=-m guti.engine", f"dir={ROOT}", "name=guti",
            "option.Level=2",
            "-engine", f"cmd={sys.executable}", f"args={BOTS_DIR / 'python' / 'random_bot.py'}",
            f"name={INJECTION}"]
    if engines == 3:
        argv += ["-engine", f"cmd={sys.executable}",
                 f"args={BOTS_DIR / 'python' / 'greedy_bot.py'}", "name=greedy"]
    argv += ["-each", "tc=5+0.05", "-games", "2", "-openings", "random:4", "-srand", "7",
             "-db", str(tmp_path / "t.db"), "-concurrency", "2", "-quiet", *extra]
    return subprocess.run(argv, capture_output=True, text=True, timeout=600, cwd=tmp_path)


def embedded_data(html: str) -> dict:
    found = re.search(r'<script id="guti-data" type="application/json">(.*?)</script>', html, re.S)
    assert found
    return json.loads(found.group(1))


def test_tournament_report_holds_every_game_and_escapes_names(tmp_path: Path) -> None:
    done = run_tournament(tmp_path, "-report", "out/t.html")
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip().splitlines()[-1] == "out/t.html"
    html = (tmp_path / "out" / "t.html").read_text()
    assert INJECTION not in html  # only ever inside the JSON, escaped
    assert "http://" not in html.replace("http://www.w3.org/2000/svg", "")
    data = embedded_data(html)
    assert [e["name"] for e in data["engines"]] == ["guti", INJECTION]
    with TournamentStore(str(tmp_path / "t.db"), create=False) as store:
        stored = [(info["game_id"] + 1, rec.final_fen, rec.moves) for info, rec in store.records()]
    assert [(g[0], g[12], g[8].split()) for g in data["games"]] == stored
    for number, final, moves in stored:  # the rules replay each stored game to its final FEN
        board, _ = replay("egara-guti", None, moves)
        assert board.fen() == final, number
    again = subprocess.run([*GUTI, "report", str(tmp_path / "t.db"), "-html", str(tmp_path / "r.html")],
                           capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert embedded_data((tmp_path / "r.html").read_text())["games"] == data["games"]


def test_report_usage_mistakes_exit_2(tmp_path: Path) -> None:
    for argv, message in (([], "usage"), ([str(tmp_path / "none.db"), "-html", "x.html"], "none.db"),
                          ([str(tmp_path / "x.db")], "-html")):
        done = subprocess.run([*GUTI, "report", *argv], capture_output=True, text=True, timeout=60)
        assert done.returncode == 2 and message in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1



@pytest.mark.slow
def test_report_of_an_sprt_run_charts_its_llr(tmp_path: Path) -> None:
    """The SPRT is stored with the settings, so ``guti report`` needs no flag for it; the
    chart's last point is the LLR ``guti standings -sprt`` prints."""
    done = run_tournament(tmp_path, "-sprt", "elo0=0", "elo1=10", "model=logistic")
    assert done.returncode == 0, done.stderr
    db = str(tmp_path / "t.db")
    report = subprocess.run([*GUTI, "report", db, "-html", str(tmp_path / "r.html")],
                            capture_output=True, text=True, timeout=120)
    assert report.returncode == 0, report.stderr
    sprt = embedded_data((tmp_path / "r.html").read_text())["tally"]["sprt"]
    assert sprt is not None and "elo1=10" in sprt["describe"]
    assert [p[0] for p in sprt["path"]] == [1, 2]
    standings = subprocess.run([*GUTI, "standings", db, "-sprt", "elo0=0", "elo1=10",
                                "model=logistic"], capture_output=True, text=True, timeout=120)
    printed = re.search(r"LLR (-?[\d.]+)", standings.stdout)
    assert printed, standings.stdout
    assert f"{sprt['path'][-1][1]:.2f}" == printed.group(1) == f"{sprt['llr']:.2f}"


def test_every_script_part_is_inlined_in_both_pages() -> None:
    """The report's scripts are split by concern; both pages carry every part (the live
    page its own script too), and no page refers to a script file."""
    from importlib import resources

    from guti.referee.web.report import REPORT_SCRIPTS, asset, render_page

    static = resources.files("guti.referee.web").joinpath("static")
    scripts = sorted(f.name for f in static.iterdir() if f.name.endswith(".js"))
    assert sorted([*REPORT_SCRIPTS, "live.js"]) == scripts
    data = {"title": "t"}
    report, live = render_page(data), render_page(data, live=True)
    for name in REPORT_SCRIPTS:
        assert asset(name) in report and asset(name) in live
        assert len(asset(name).splitlines()) <= 400
    assert asset("live.js") in live and asset("live.js") not in report
    assert "<script src" not in report and "<script src" not in live
