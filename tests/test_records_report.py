"""The report's evaluation graph: each game's scores from White's point of view, as the
engines reported them in the traffic log, embedded in the page and drawn by the browser.

The browser part skips, with the reason, when chromium or Playwright is missing (as
``tests/test_web_browser.py`` does)."""

from __future__ import annotations

import base64
import gzip
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import GUTI, ROOT, parse_pdn
from tests.test_records import reported_moves
from tests.test_web_board import embedded_data
from tests.test_web_browser import CHROMIUM, LAUNCH_ARGS, BrowserPage

try:
    from playwright.sync_api import sync_playwright
except ImportError:  # pragma: no cover - depends on the machine
    sync_playwright = None  # type: ignore[assignment]


@pytest.fixture(scope="module")
def tournament(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("evals")
    argv = [*GUTI, "tournament", "-db", "t.db", "-log", "t.log", "-report", "t.html",
            "-games", "2", "-concurrency", "1", "-each", "depth=3", "-quiet"]
    for name, seed in (("RefA", 1), ("RefB", 2)):
        argv += ["-engine", f"cmd={sys.executable}", "args=-m guti.engine", f"dir={ROOT}",
                 f"name={name}", f"option.Seed={seed}"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=folder)
    assert done.returncode == 0, done.stderr
    return folder


def _white_view(score: str, white_moved: bool) -> int:
    kind, value = score.split()
    centi = int(value) if kind == "cp" else 1000 if kind == "win" else -1000
    centi = max(-1000, min(1000, centi))
    return centi if white_moved else -centi


def test_the_report_embeds_the_scores_from_whites_view(tournament: Path) -> None:
    games = embedded_data((tournament / "t.html").read_text())["games"]
    said = reported_moves((tournament / "t.log").read_text())
    for game in sorted(games, key=lambda g: g[0]):  # one at a time: log order is game order
        moves = game[8].split()
        plies, said = said[: len(moves)], said[len(moves):]
        assert [p.move for p in plies] == moves
        assert game[14] == [_white_view(p.fields["score"], i % 2 == 0)
                            for i, p in enumerate(plies)]
    assert said == []


@pytest.mark.browser
@pytest.mark.skipif(sync_playwright is None, reason="Playwright for Python is not installed")
@pytest.mark.skipif(not os.access(CHROMIUM, os.X_OK), reason="chromium is not installed")
def test_the_viewer_draws_the_scores(tmp_path: Path, tournament: Path) -> None:
    game = embedded_data((tournament / "t.html").read_text())["games"][0]
    evals = game[14]
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=CHROMIUM, args=LAUNCH_ARGS, headless=True)
        try:
            browser = BrowserPage(context.new_page())
            page = browser.page
            page.goto((tournament / "t.html").as_uri())
            page.click(f'#games-body tr[data-game="{game[0]}"]')
            points = page.get_attribute("#eval-chart svg polyline.eval", "points") or ""
            assert browser.errors == []
        finally:
            context.close()
    ys = [float(p.split(",")[1]) for p in points.split()]
    assert len(ys) == len(evals)
    for i in range(len(evals) - 1):  # higher for White is higher on the graph
        assert (ys[i] < ys[i + 1]) == (evals[i] > evals[i + 1]), (i, evals[i : i + 2])


def test_the_report_file_carries_guti_exports_pdn(tournament: Path) -> None:
    """The packed PDN in a report file is byte for byte what ``guti export -pdn`` writes,
    and each game's byte range in it is that game's record."""
    done = subprocess.run([*GUTI, "export", "t.db", "-pdn", "export.pdn"], capture_output=True,
                          text=True, timeout=120, cwd=tournament)
    assert done.returncode == 0, done.stderr
    html = (tournament / "t.html").read_text()
    packed = re.search(r'<script id="guti-pdn" type="application/octet-stream">([^<]*)</script>',
                       html)
    assert packed
    text = gzip.decompress(base64.b64decode(packed.group(1)))
    assert text == (tournament / "export.pdn").read_bytes()
    ranges = embedded_data(html)["pdn"]
    assert [number for number, _, _ in ranges] == [1, 2]
    for number, start, end in ranges:
        (game,) = parse_pdn(text[start:end].decode("utf-8"))
        assert game.tags["Game"] == str(number)
