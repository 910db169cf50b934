"""The report and the live page in a real browser: Debian's chromium driven by Playwright.

Why a browser: the report is mostly JavaScript (standings, game list, viewer, charts) and
the live page is a stream of server-sent events; only a browser shows that they render,
that the viewer reaches a game's stored final position, that a move appears live, and
that an engine named like a script stays text. Skips, with the reason, when chromium or
Playwright is missing (``.ci/run`` installs both). Playwright's own browser download is
never used: chromium is launched from ``/usr/bin/chromium`` with a fresh profile.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from guti.referee.game.reasons import Reason
from guti.referee.game.scheduled import ScheduledGame
from guti.referee.storage.export import game_pdn, write_pdn
from guti.referee.storage.store import TournamentStore
from guti.referee.tournament.run import standings_from_store
from tests.conftest import BOTS_DIR, GUTI, ROOT
from tests.test_web_board import INJECTION, run_tournament

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync"]

try:
    from playwright.sync_api import Page, sync_playwright
except ImportError:  # pragma: no cover - depends on the machine
    sync_playwright = None  # type: ignore[assignment]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(sync_playwright is None,
                       reason="Playwright for Python is not installed (pip install playwright)"),
    pytest.mark.skipif(not os.access(CHROMIUM, os.X_OK),
                       reason="chromium is not installed (apt-get install -y chromium)"),
]


class BrowserPage:
    """One page in a fresh headless chromium, recording console errors and dialogs."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(str(e)))

        def on_dialog(dialog: Any) -> None:
            self.dialogs.append(dialog.message)
            dialog.dismiss()

        page.on("dialog", on_dialog)


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[BrowserPage]:
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=CHROMIUM, args=LAUNCH_ARGS, headless=True)
        try:
            yield BrowserPage(context.new_page())
        finally:
            context.close()


@pytest.fixture(params=[1280, 390], ids=["desktop", "phone"])
def sized(browser: BrowserPage, request: pytest.FixtureRequest) -> BrowserPage:
    """:func:`browser` at a desktop's width, then at a phone's."""
    browser.page.set_viewport_size({"width": request.param, "height": 800})
    return browser


@pytest.fixture(scope="module")
def tournament(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real three-engine tournament (one engine named like a script) with its report."""
    folder = tmp_path_factory.mktemp("report")
    done = run_tournament(folder, "-report", "t.html", engines=3)
    assert done.returncode == 0, done.stderr
    return folder


def test_report_opens_with_standings_and_replays_a_game(sized: BrowserPage,
                                                        tournament: Path) -> None:
    browser = sized
    with TournamentStore(str(tournament / "t.db"), create=False) as store:
        names = store.engine_names()
        expected = [ln.name for ln in standings_from_store(store, names, "roundrobin").ranking()]
        games = [(info["game_id"] + 1, rec.final_fen, len(rec.moves))
                 for info, rec in store.records()]
    page = browser.page
    page.goto((tournament / "t.html").as_uri())
    page.wait_for_selector("#games-body tr")
    shown = page.locator("#standings tbody tr td:nth-child(2)").all_text_contents()
    assert shown == expected
    # Each table headed Elo says what its figure means, and which one compares engines.
    text = page.inner_text("body")
    assert "a performance figure" in text and "The one Elo per engine to compare engines by" in text
    # What each engine used, one row per engine, as the database holds it.
    used = page.locator("#settings table:has(th:text-is('peak memory')) tbody tr td:first-child")
    assert sorted(used.all_text_contents()) == sorted(names)
    number, final, plies = max(games, key=lambda g: g[2])
    page.click(f'#games-body tr[data-game="{number}"]')
    assert page.text_content("#ply") == f"ply 0 / {plies}"
    for _ in range(plies):
        page.click("#next")
    assert page.text_content("#fen") == final
    page.keyboard.press("ArrowLeft")
    assert page.text_content("#ply") == f"ply {plies - 1} / {plies}"
    page.keyboard.press("End")
    assert page.text_content("#fen") == final
    assert page.locator("#board svg .piece").count() == sum(
        final.split()[0].count(c) for c in "wb")
    page.select_option("#f-engine", str(names.index("greedy")))
    rows = page.locator("#games-body tr td:nth-child(3), #games-body tr td:nth-child(4)")
    pairs = rows.all_text_contents()
    assert pairs and all(pairs[i] == "greedy" or pairs[i + 1] == "greedy"
                         for i in range(0, len(pairs), 2))
    assert browser.errors == []


def test_engine_named_like_a_script_shows_as_text(browser: BrowserPage, tournament: Path) -> None:
    page = browser.page
    page.goto((tournament / "t.html").as_uri())
    page.wait_for_selector("#games-body tr")
    assert INJECTION in page.locator("#standings").inner_text()
    assert page.locator("#standings script").count() == 0
    # A frame drawn after the page's scripts ran: any alert would have come by then.
    page.evaluate("() => new Promise(done => requestAnimationFrame(() => setTimeout(done)))")
    assert browser.dialogs == []
    assert browser.errors == []


def test_live_page_shows_moves_and_standings_as_they_happen(browser: BrowserPage, tmp_path: Path) -> None:
    argv = [*GUTI, "tournament",
            "-engine", f"cmd={sys.executable}", "args=-m guti.engine", f"dir={ROOT}", "name=guti",
            "-engine", f"cmd={sys.executable}", f"args={BOTS_DIR / 'python' / 'random_bot.py'}",
            "name=random", "-each", "tc=6+0.1", "-games", "4", "-concurrency", "1",
            "-db", str(tmp_path / "live.db"), "-serve", "0"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            cwd=tmp_path)
    try:
        assert proc.stdout is not None
        url = None
        for line in proc.stdout:
            found = re.search(r"live page: (http://127\.0\.0\.1:\d+/)", line)
            if found:
                url = found.group(1)
                break
        assert url, "no live page address printed"
        page = browser.page
        page.goto(url)
        page.wait_for_selector(".live-game .live-ply", timeout=60_000)
        first = _ply(page)
        page.wait_for_function(
            f"() => [...document.querySelectorAll('.live-ply')].some("
            f"e => +e.textContent.split(':')[0].slice(4) > {first})", timeout=60_000)
        assert _ply(page) > first
        assert re.search(r"ply \d+: \d+[-x]\d+", page.locator(".live-ply").first.inner_text())
        # Both clocks, and the reference engine's last score and depth, once each has moved.
        page.wait_for_function(
            "() => [...document.querySelectorAll('.live-info')].some(e => /^clocks: white "
            "\\d+\\.\\d s, black \\d+\\.\\d s; score [-+]\\d+\\.\\d\\d \\(White\\); depth \\d+$/"
            ".test(e.textContent))", timeout=60_000)
        assert page.text_content("#live-status") == "connected"
        # A card's small board has no point numbers (they read as capture marks there).
        page.wait_for_selector(".live-game svg .point")  # a card may be between two games
        assert page.locator(".live-game svg .label").count() == 0
        # After a game is stored, its result reaches the standings and the game list.
        page.wait_for_function(
            "() => /^[1-9]\\/4 games/.test(document.getElementById('progress').textContent)",
            timeout=120_000)
        # the standings come as an event of their own, just after the game's
        page.wait_for_function(
            "() => [...document.querySelectorAll('#standings tbody tr td:nth-child(3)')]"
            ".reduce((n, e) => n + +e.textContent, 0) >= 2", timeout=60_000)
        played = page.locator("#standings tbody tr td:nth-child(3)").all_text_contents()
        assert sum(map(int, played)) >= 2  # each game counts for both engines
        assert page.locator("#games-body tr").count() >= 1
        assert browser.errors == []
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)


def _ply(page: Page) -> int:
    text = page.locator(".live-ply").first.inner_text()
    return int(text.split(":")[0].removeprefix("ply "))


def _live_server(db: Path) -> tuple[subprocess.Popen[bytes], str]:
    """``-serve``'s server process on ``db``, fed by this test (its standard input)."""
    spec = json.dumps({"db": str(db), "host": "127.0.0.1", "port": 0, "sprt": None})
    proc = subprocess.Popen([sys.executable, "-m", "guti.referee.web.feed", spec],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=ROOT)
    assert proc.stdout is not None
    line = proc.stdout.readline().decode()
    assert line.startswith("url "), line
    return proc, line[4:].strip()


def _take_back_last_game(db: Path) -> Any:
    """Remove the last stored game from ``db`` (as if still being played); returns what
    :func:`_store_again` needs to store it as a running tournament would."""
    with TournamentStore(str(db), create=False) as store:
        info, record = list(store.records())[-1]
    with contextlib.closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("DELETE FROM games WHERE seq = ?", (info["seq"],))
    return info, record


def _store_again(db: Path, taken: Any) -> None:
    info, record = taken
    with TournamentStore(str(db)) as store:
        names = store.engine_names()
        store.record_game(ScheduledGame(info["game_id"], info["pair_id"], info["round"],
                                        names.index(record.white), names.index(record.black),
                                        None), record)


@pytest.mark.parametrize("width", [1280, 390])
def test_live_page_shows_games_stored_later_and_the_end_of_the_run(
        browser: BrowserPage, tournament: Path, tmp_path: Path, width: int) -> None:
    db = tmp_path / "t.db"
    shutil.copyfile(tournament / "t.db", db)
    taken = _take_back_last_game(db)
    with TournamentStore(str(db), create=False) as store:
        stored = store.count_finished()
        seen = {str(rec.reason) for _, rec in store.records()}
    # The game comes back adjudicated: a reason no game on the page had.
    assert "adjudication" not in seen
    taken[1].reason, taken[1].detail, reason = Reason.ADJUDICATION, "a reason new here", "adjudication"
    proc, url = _live_server(db)
    try:
        page = browser.page
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(url)
        page.wait_for_function(
            "() => document.getElementById('live-status').textContent === 'connected'")
        assert page.locator("#games-body tr").count() == stored
        assert page.locator(f'#f-reason option[value="{reason}"]').count() == 0
        assert page.locator("#viewer").is_hidden()  # no empty viewer before a game is opened
        assert page.locator("#pdn-link").get_attribute("href") == "games.pdn"
        assert page.locator("#pdn-link").is_visible()  # the server gives the games as PDN
        # Every game, and one game from the viewer, as the server gives them: guti's PDN.
        with TournamentStore(str(db), create=False) as store:
            every = io.StringIO()
            write_pdn(store, every)
            number = next(store.records_by_game())[0]["game_id"] + 1
            one = game_pdn(store, number)
        assert download(page, "#pdn-link") == ("games.pdn", every.getvalue().encode())
        page.locator(f'#games-body tr[data-game="{number}"]').focus()
        page.keyboard.press("Enter")
        assert download(page, "#game-pdn") == (f"game-{number}.pdn", (one or "").encode())
        page.keyboard.press("Escape")
        # The game still being played: its card, opened from the keyboard, shows it as it
        # stands, and closing gives the focus back to the card.
        info, record = taken
        running = info["game_id"] + 1
        assert proc.stdin is not None
        feed = [{"t": "start", "game": {"id": running, "white": record.white,
                                        "black": record.black,
                                        "start_fen": record.start_fen or "", "moves": ""}}]
        side = record.first_side
        for move in record.moves[:3]:
            feed.append({"t": "move", "id": running, "move": move, "side": side, "clock": 4000})
            side = "b" if side == "w" else "w"
        proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in feed))
        proc.stdin.flush()
        card = f"#live-{running}"
        page.wait_for_function(f"() => /^ply 3:/.test(document.querySelector('{card} .live-ply')"
                               "?.textContent)")
        page.locator(card).focus()
        page.keyboard.press("Enter")
        assert page.locator("#viewer").is_visible()
        assert re.match(rf"Game {running}: .* \(being played\) - as of ply 3$",
                        page.text_content("#viewer-title"))
        assert page.text_content("#ply") == "ply 3 / 3"
        assert page.text_content("#fen") == page.text_content(f"{card} .live-fen")
        assert in_view(page, "#viewer")
        page.keyboard.press("Escape")
        assert page.evaluate("document.activeElement.id") == f"live-{running}"
        _store_again(db, taken)
        page.wait_for_function(
            f"() => document.querySelectorAll('#games-body tr').length === {stored + 1}")
        assert page.text_content("#progress").startswith(f"{stored + 1}/")
        # The reason filter offers the reason the page had not seen before.
        assert page.locator(f'#f-reason option[value="{reason}"]').count() == 1
        report = str(tmp_path / "final report #1?.html")  # "#" and "?" are part of the path
        assert proc.stdin is not None
        proc.stdin.write(json.dumps({"t": "over", "stopped": "every game played",
                                     "report": report}).encode() + b"\n")
        proc.stdin.close()
        page.wait_for_function(
            "() => document.getElementById('live-status').textContent === 'tournament over'")
        assert "every game played" in page.text_content("#live-over")
        link = page.locator("#live-over a")
        assert link.text_content() == report
        assert link.get_attribute("href") == Path(report).as_uri()
        assert proc.wait(timeout=60) == 0
        assert page.text_content("#live-status") == "tournament over"
        assert page.evaluate("document.documentElement.scrollWidth") <= width  # no sideways page
        assert browser.errors == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_guti_serve_of_a_finished_database_claims_no_live_game(browser: BrowserPage,
                                                               tournament: Path) -> None:
    proc = subprocess.Popen([*GUTI, "serve", str(tournament / "t.db"), "-port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        found = re.search(r"at (http://\S+/)", proc.stdout.readline())
        assert found
        page = browser.page
        page.goto(found.group(1))
        page.wait_for_function("() => document.getElementById('live-status').textContent "
                               "=== 'no tournament running'")
        assert page.locator(".live-game").count() == 0
        assert "No guti is playing this database" in page.text_content("#live-over")
        assert browser.errors == []
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)


def test_sprt_state_is_at_the_top(browser: BrowserPage, tournament: Path, tmp_path: Path) -> None:
    page = browser.page
    page.goto((tournament / "t.html").as_uri())  # no SPRT: nothing said about one
    page.wait_for_selector("#games-body tr")
    assert page.locator("#sprt-top").is_hidden()
    assert page.locator("#pairs-section").is_hidden()  # three engines: no pairs table
    html = tmp_path / "sprt.html"
    done = run_tournament(tmp_path, "-sprt", "elo0=0", "elo1=10", "-report", str(html))
    assert done.returncode == 0, done.stderr
    page.goto(html.as_uri())
    page.wait_for_selector("#games-body tr")
    top = page.text_content("#sprt-top")
    assert re.match(r"SPRT: (no verdict yet|H[01] accepted) - LLR -?\d+\.\d\d between the bounds "
                    r"-\d+\.\d\d \(H0\) and \d+\.\d\d \(H1\); elo0=0 elo1=10", top), top
    assert page.locator("#sprt-top").bounding_box()["y"] < page.locator("#standings").bounding_box()["y"]
    # Two engines play in pairs: the pentanomial counts are shown, as guti standings has them.
    with TournamentStore(str(tmp_path / "t.db"), create=False) as store:
        ptnml = standings_from_store(store, store.engine_names(), "roundrobin").ptnml
    cells = page.locator("#pairs tbody tr").first.locator("td").all_text_contents()
    (counts,) = ptnml.values()
    assert cells[1:7] == [str(sum(counts)), *map(str, counts)]
    assert browser.errors == []


def test_an_sprt_stop_is_named_in_the_progress_line(sized: BrowserPage, tmp_path: Path) -> None:
    """After an SPRT decided, "N/M games played" says why the rest were not played."""
    browser = sized
    from guti.referee.stats.sprt import SprtSpec
    from guti.referee.web.data import report_data
    from guti.referee.web.report import render_page

    done = run_tournament(tmp_path)
    assert done.returncode == 0, done.stderr
    with TournamentStore(str(tmp_path / "t.db"), create=False) as store:
        data = report_data(store, SprtSpec(elo0=0, elo1=10))
    data["tally"]["sprt"]["decision"] = "H1"  # set here: two games decide no SPRT
    data["scheduled"] = data["finished"] + 10
    page_file = tmp_path / "stopped.html"
    page_file.write_text(render_page(data), encoding="utf-8")
    page = browser.page
    page.goto(page_file.as_uri())
    page.wait_for_selector("#games-body tr")
    assert page.text_content("#progress") == (f"{data['finished']}/{data['scheduled']} games "
                                              "played; stopped early: SPRT H1 accepted")
    assert page.text_content("#sprt-top").startswith("SPRT: H1 accepted")
    assert browser.errors == []


def in_view(page: Page, selector: str) -> bool:
    return bool(page.evaluate("""s => { const r = document.querySelector(s).getBoundingClientRect();
        return r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth; }""",
                              selector))


def download(page: Page, selector: str) -> tuple[str, bytes]:
    """Follow the link ``selector`` (by the keyboard: focus and Enter); the file's name and bytes."""
    with page.expect_download() as info:
        page.locator(selector).focus()
        page.keyboard.press("Enter")
    download = info.value
    return download.suggested_filename, Path(download.path()).read_bytes()
