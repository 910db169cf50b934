"""The report's game list and viewer in a real browser (Debian's chromium driven by
Playwright, as in ``tests/test_web_browser.py``, whose fixtures these tests use): the
viewer as a dialog that keeps the list's place, keyboard use, every game's address,
search and sorting, and the PDN a report file gives with no server.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from guti.referee.storage.store import TournamentStore
from guti.referee.web.data import report_data
from guti.referee.web.report import render_page
from tests import test_web_browser as pages
from tests.conftest import GUTI, parse_pdn
from tests.test_web_browser import BrowserPage, download, in_view

# The browser tier's marks and fixtures (pytest finds fixtures by name in this module).
pytestmark = pages.pytestmark
browser = pages.browser
sized = pages.sized
tournament = pages.tournament


@pytest.mark.parametrize("width", [1280, 390])
def test_report_works_from_the_keyboard_alone(browser: BrowserPage, tournament: Path,
                                              width: int) -> None:
    page = browser.page
    page.set_viewport_size({"width": width, "height": 800})
    page.goto((tournament / "t.html").as_uri())
    page.wait_for_selector("#games-body tr")
    assert page.locator("#viewer").is_hidden()
    assert page.locator("#pdn-link").is_visible()  # a report file carries its games' PDN
    first = page.locator("#games-body tr").first
    first.focus()
    assert page.evaluate("document.activeElement.tagName") == "TR"  # a row takes the focus
    scrolled = page.evaluate("window.scrollY")
    page.keyboard.press("Enter")
    assert page.locator("#viewer").is_visible()
    assert page.evaluate("document.activeElement.id") == "viewer-title"
    plies = int(page.text_content("#ply").split("/ ")[1])
    page.locator("#moves span.ply").nth(1).focus()
    page.keyboard.press("Enter")
    assert page.text_content("#ply") == f"ply 2 / {plies}"
    page.keyboard.press("End")
    assert page.text_content("#ply") == f"ply {plies} / {plies}"
    assert page.evaluate("window.scrollY") == scrolled  # End moved the game, not the page
    names = [page.get_by_role("button", name=n).count()
             for n in ("first position", "previous move", "next move", "last position",
                       "close the game")]
    assert names == [1, 1, 1, 1, 1]
    assert page.locator("#board svg > title").first.text_content().startswith("Board: ")
    # The viewer numbers every point; an empty point's number sits beside its dot.
    empty = page.evaluate("""() => [...document.querySelectorAll('#board svg .point')]
        .filter(d => !document.querySelector(`#board svg .piece[data-point="${d.dataset.point}"]`))
        .map(d => [d.dataset.point, +d.getAttribute('cx')])""")
    labels = {t: float(x) for t, x in page.evaluate(
        "() => [...document.querySelectorAll('#board svg .label')]"
        ".map(t => [t.textContent, t.getAttribute('x')])")}
    assert empty and all(labels[point] > cx for point, cx in empty)
    assert page.locator("#clock-chart svg > title").count() == 1
    chart = page.locator("#clock-chart svg").inner_html()
    assert ">white</text>" in chart and ">black</text>" in chart  # the clock chart's legend
    board, moves = page.locator("#board").bounding_box(), page.locator("#moves").bounding_box()
    if width >= 1280:  # the move list beside the board, not under it
        assert moves["x"] >= board["x"] + board["width"] and moves["y"] < board["y"] + board["height"]
    assert in_view(page, "#viewer")
    assert page.evaluate("(v => v.scrollWidth <= v.clientWidth)(document.getElementById('viewer'))")
    page.keyboard.press("Escape")  # closed: the focus is back on the row, the page unmoved
    assert page.locator("#viewer").is_hidden()
    assert page.evaluate("document.activeElement.dataset.game") == first.get_attribute("data-game")
    assert page.evaluate("window.scrollY") == scrolled
    page.locator("#f-engine").focus()
    page.keyboard.press("Home")  # keys outside the viewer are the page's
    assert page.text_content("#ply") == f"ply {plies} / {plies}"
    # The Elo chart has values on its axis, and no engine's name runs off its edges.
    assert page.locator("#elo-chart svg text", has_text=re.compile(r"^-?\d+(\.\d)?$")).count() >= 2
    assert page.evaluate("""() => { const svg = document.querySelector('#elo-chart svg');
        const box = svg.getBoundingClientRect();
        return [...svg.querySelectorAll('text')].every(t => { const r = t.getBoundingClientRect();
          return r.left >= box.left - 1 && r.right <= box.right + 1; }); }""")
    assert page.evaluate("document.documentElement.scrollWidth") <= width  # no sideways page
    page.emulate_media(color_scheme="dark")  # a dark page for a dark desktop
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(24, 26, 27)"
    assert browser.errors == []


def test_every_game_and_position_has_an_address(sized: BrowserPage, tournament: Path) -> None:
    browser = sized
    with TournamentStore(str(tournament / "t.db"), create=False) as store:
        games = {info["game_id"] + 1: rec for info, rec in store.records()}
    number, record = max(games.items(), key=lambda g: len(g[1].moves))
    page = browser.page
    page.goto((tournament / "t.html").as_uri())
    page.wait_for_selector("#games-body tr")
    page.click(f'#games-body tr[data-game="{number}"]')
    page.click("#next")
    assert page.evaluate("location.hash") == f"#game={number}&ply=1"
    plies = len(record.moves)
    page.goto((tournament / "t.html").as_uri() + f"#game={number}&ply={plies}")
    page.reload()
    page.wait_for_selector("#games-body tr")
    assert page.text_content("#ply") == f"ply {plies} / {plies}"
    assert page.text_content("#fen") == record.final_fen
    assert browser.errors == []


def test_games_list_searches_and_sorts(sized: BrowserPage, tournament: Path) -> None:
    browser = sized
    with TournamentStore(str(tournament / "t.db"), create=False) as store:
        games = [(info["game_id"] + 1, rec) for info, rec in store.records()]
    page = browser.page
    page.goto((tournament / "t.html").as_uri())
    page.wait_for_selector("#games-body tr")
    numbers = lambda: [int(n) for n in page.locator("#games-body tr td:first-child")  # noqa: E731
                       .all_text_contents()]
    assert numbers() == sorted(n for n, _ in games)
    page.get_by_role("button", name="#").click()  # the number column again: descending
    assert numbers() == sorted((n for n, _ in games), reverse=True)
    page.get_by_role("button", name="plies").click()
    plies = [len(r.moves) for _, r in sorted(games, key=lambda g: (len(g[1].moves), g[0]))]
    shown = [int(p) for p in page.locator("#games-body tr td:nth-child(7)").all_text_contents()]
    assert shown == plies
    # Next and previous game follow the list as sorted (here by plies).
    first, second = page.locator("#games-body tr").nth(0), page.locator("#games-body tr").nth(1)
    first.click()
    page.get_by_role("button", name="next game").click()
    assert page.evaluate("location.hash").startswith(f"#game={second.get_attribute('data-game')}&")
    page.get_by_role("button", name="previous game").click()
    assert page.evaluate("location.hash").startswith(f"#game={first.get_attribute('data-game')}&")
    page.get_by_role("button", name="close the game").click()
    page.fill("#f-search", "greedy")
    with_greedy = sorted(n for n, r in games if "greedy" in (r.white, r.black))
    assert sorted(numbers()) == with_greedy
    number = games[-1][0]
    page.fill("#f-search", f"#{number}")
    assert numbers()[0] == number
    assert browser.errors == []


def _long_report(tournament: Path, folder: Path, games: int = 1000) -> Path:
    """A report of ``games`` games (the tournament's real games, numbered on): a list long
    enough that its rows run far below the first screen."""
    with TournamentStore(str(tournament / "t.db"), create=False) as store:
        data = report_data(store)
    real = data["games"]
    data["games"] = [[n, *real[(n - 1) % len(real)][1:]] for n in range(1, games + 1)]
    data["finished"] = data["scheduled"] = games
    page_file = folder / "long.html"
    page_file.write_text(render_page(data), encoding="utf-8")
    return page_file


@pytest.mark.parametrize("width", [1280, 390])
def test_opening_a_game_far_down_the_list_keeps_the_place(browser: BrowserPage, tournament: Path,
                                                          tmp_path: Path, width: int) -> None:
    page = browser.page
    page.set_viewport_size({"width": width, "height": 800})
    page.goto(_long_report(tournament, tmp_path).as_uri())
    page.wait_for_selector("#games-body tr")
    page.click("#show-more")  # rows 501-1,000
    row = '#games-body tr[data-game="900"]'
    page.locator(row).scroll_into_view_if_needed()
    place = page.evaluate("window.scrollY")
    assert place > 10_000  # far down the page
    page.click(row)
    assert page.locator("#viewer").is_visible()
    assert page.evaluate("window.scrollY") == place  # the list stays where it was
    assert in_view(page, "#viewer")  # the whole viewer is on the screen, at either width
    assert page.evaluate("(v => v.scrollWidth <= v.clientWidth)(document.getElementById('viewer'))")
    assert page.text_content("#viewer-title").startswith("Game 900 ")
    page.get_by_role("button", name="next game").click()
    assert page.text_content("#viewer-title").startswith("Game 901 ")
    page.get_by_role("button", name="close the game").click()
    assert page.locator("#viewer").is_hidden()
    assert page.evaluate("document.activeElement.dataset.game") == "901"  # the game last shown
    assert in_view(page, '#games-body tr[data-game="901"]')
    assert page.evaluate("location.hash") == ""  # the address names no game once closed
    # Keyboard only: Space opens the focused row (and presses no button of the viewer),
    # the arrows step, Escape closes, and the focus and the page are where they were.
    page.keyboard.press("Shift+Tab")
    assert page.evaluate("document.activeElement.dataset.game") == "900"
    place = page.evaluate("window.scrollY")
    page.keyboard.press(" ")
    assert page.locator("#viewer").is_visible()
    assert page.text_content("#viewer-title").startswith("Game 900 ")
    page.keyboard.press("ArrowRight")
    assert page.text_content("#ply").startswith("ply 1 / ")
    assert page.evaluate("location.hash") == "#game=900&ply=1"
    page.keyboard.press("Escape")
    assert page.locator("#viewer").is_hidden()
    assert page.evaluate("document.activeElement.dataset.game") == "900"
    assert page.evaluate("window.scrollY") == place
    assert page.evaluate("document.documentElement.scrollWidth") <= width  # no sideways page
    assert browser.errors == []


def test_report_file_gives_the_pdn_guti_export_writes(browser: BrowserPage, tournament: Path,
                                                      tmp_path: Path) -> None:
    exported = tmp_path / "export.pdn"
    done = subprocess.run([*GUTI, "export", str(tournament / "t.db"), "-pdn", str(exported)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    with TournamentStore(str(tournament / "t.db"), create=False) as store:
        records = {info["game_id"] + 1: rec for info, rec in store.records()}
    page = browser.page
    page.goto((tournament / "t.html").as_uri())  # from disk: no server to ask
    page.wait_for_selector("#games-body tr")
    name, data = download(page, "#pdn-link")
    assert name == "games.pdn"
    assert data == exported.read_bytes()  # byte for byte what guti export writes
    games = parse_pdn(data.decode("utf-8"))
    assert [int(g.tags["Game"]) for g in games] == sorted(records)
    # The game in the viewer, alone: its record as the export has it.
    number = max(records, key=lambda n: len(records[n].moves))
    page.click(f'#games-body tr[data-game="{number}"]')
    name, data = download(page, "#game-pdn")
    assert name == f"game-{number}.pdn"
    (game,) = parse_pdn(data.decode("utf-8"))
    assert game.tags["Game"] == str(number)
    assert game.move_texts == records[number].moves
    assert game.final_fen == records[number].final_fen
    assert data.decode("utf-8") in exported.read_text(encoding="utf-8")
    # The next game's link gives the next game, not the one before.
    page.get_by_role("button", name="next game").click()
    following = int(page.evaluate("location.hash").split("&")[0].removeprefix("#game="))
    name, data = download(page, "#game-pdn")
    assert name == f"game-{following}.pdn"
    assert parse_pdn(data.decode("utf-8"))[0].move_texts == records[following].moves
    assert browser.errors == []
