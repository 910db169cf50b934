"""Size and load time of the HTML report of a large tournament.

Builds (or reuses, ``--db``) a tournament database of about ``--games`` games played by
four instant-reply random movers (``tests/engines/faulty.py --mode good``) through the
real tournament loop, writes its report with ``write_report`` and opens it from
``file://`` in headless chromium (Playwright, ``/usr/bin/chromium``), timing:

- writing the report (reading the database, standings, JSON, the file);
- the browser: navigation start to the games list rendered (the page's own
  ``performance.now()``), and the wall time of ``goto`` until then;
- opening the longest game in the viewer and stepping to its end with the End key;
- downloading every game as PDN (unpacked from the file);
- listing 500 more games (the list shows 500 at a time).

    python benchmarks/web_report.py [--games 10000] [--db FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import shlex
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from rich.console import Console  # noqa: E402

from guti.referee.cli.progress import TournamentDisplay  # noqa: E402
from guti.referee.config.tournament import settings_from_argv  # noqa: E402
from guti.referee.storage.store import TournamentStore  # noqa: E402
from guti.referee.tournament.run import run_tournament  # noqa: E402
from guti.referee.web.report import write_report  # noqa: E402

FAULTY = os.path.join(ROOT, "tests", "engines", "faulty.py")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def build(db: str, games: int) -> None:
    engines = []
    for seed, name in enumerate("abcd", 1):
        args = shlex.join([FAULTY, "--mode", "good", "--seed", str(seed)])
        engines += ["-engine", f"cmd={sys.executable}", f"args={args}", f"name={name}"]
    per_encounter = max(2, round(games / 6 / 2) * 2)  # 4 engines: 6 encounters
    argv = [*engines, "-each", "tc=60+1", "-games", str(per_encounter), "-concurrency", "2",
            "-db", db, "-openings", "random:2", "-srand", "1", "-quiet"]
    settings = settings_from_argv(argv, print)
    began = time.perf_counter()
    asyncio.run(run_tournament(settings, TournamentDisplay(Console(file=io.StringIO()), settings)))
    print(f"database: {settings.total_games} games in {time.perf_counter() - began:.0f} s, "
          f"{os.path.getsize(db) / 2**20:.1f} MiB", flush=True)


def browse(html: str) -> None:
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as profile, sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            profile, executable_path="/usr/bin/chromium", args=ARGS, headless=True)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        began = time.perf_counter()
        page.goto("file://" + os.path.abspath(html), timeout=300_000)
        page.wait_for_selector("#games-body tr", timeout=300_000)
        wall = time.perf_counter() - began
        rendered = page.evaluate("performance.now()")
        rows = page.locator("#games-body tr").count()
        longest = page.evaluate("Math.max(...[...document.querySelectorAll('#games-body tr')]"
                                ".map(r => +r.children[6].textContent))")
        began = time.perf_counter()
        page.locator("#games-body tr").filter(
            has=page.locator(f"td:nth-child(7):text-is('{longest}')")).first.click()
        page.keyboard.press("End")
        page.wait_for_function(f"document.getElementById('ply').textContent.startsWith('ply {longest} ')")
        step = time.perf_counter() - began
        page.keyboard.press("Escape")  # the viewer closed: the page is the user's again
        began = time.perf_counter()
        with page.expect_download(timeout=300_000) as download:
            page.click("#pdn-link")
        pdn_size = os.path.getsize(download.value.path())
        pdn = time.perf_counter() - began
        began = time.perf_counter()
        page.click("#show-more")
        page.wait_for_function("() => document.querySelectorAll('#games-body tr').length > 500")
        more = time.perf_counter() - began
        all_rows = page.locator("#games-body tr").count()
        context.close()
    print(f"browser: games list rendered {rendered / 1000:.2f} s after navigation start "
          f"(goto to rendered {wall:.2f} s wall), {rows} rows shown; longest game "
          f"({longest} plies) opened and stepped to its end in {step:.2f} s; 500 more "
          f"rows listed in {more:.2f} s ({all_rows} in all); every game as PDN "
          f"({pdn_size / 2**20:.1f} MiB) unpacked and downloaded in {pdn:.2f} s; "
          f"page errors: {len(errors)}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=10000)
    parser.add_argument("--db", help="reuse (or create) this database")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        db = args.db or os.path.join(folder, "big.db")
        if not os.path.exists(db):
            build(db, args.games)
        html = os.path.join(folder, "big.html")
        began, cpu = time.perf_counter(), time.process_time()
        with TournamentStore(db, create=False) as store:
            games = write_report(store, html)
        seconds, cpu = time.perf_counter() - began, time.process_time() - cpu
        print(f"report: {games} games written in {seconds:.1f} s ({cpu:.1f} s CPU), "
              f"{os.path.getsize(html) / 2**20:.1f} MiB", flush=True)
        browse(html)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
