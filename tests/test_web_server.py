"""The live server without a browser: fixed read-only routes, loopback by default, slow
clients dropped, every stored game pushed with the standings, ``guti serve`` on a database.
"""

from __future__ import annotations

import asyncio
import json
import re
import signal
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("aiohttp", reason="the live server needs aiohttp (the web extra)")

from guti.referee.config.args import CliError  # noqa: E402
from guti.referee.config.tournament import serve_address  # noqa: E402
from guti.referee.storage.store import TournamentStore  # noqa: E402
from guti.referee.web.live import CLIENT_QUEUE, LiveHub, event, parse_address, serving  # noqa: E402
from tests.conftest import GUTI  # noqa: E402
from tests.test_web_board import INJECTION, embedded_data, run_tournament  # noqa: E402

#: One worker runs this module: its module fixture (real runs) then happens once, not per worker.
pytestmark = pytest.mark.xdist_group("web_server")


def test_addresses_default_to_loopback() -> None:
    assert parse_address("8080") == ("127.0.0.1", 8080)
    assert parse_address("0.0.0.0:9000") == ("0.0.0.0", 9000)
    assert parse_address("[::1]:9000") == ("::1", 9000)
    for bad in ("x", "host:", "1:99999"):
        with pytest.raises(ValueError):
            parse_address(bad)
        with pytest.raises(CliError):
            serve_address(bad)


def test_a_client_that_falls_behind_is_dropped_and_others_go_on() -> None:
    async def scenario() -> None:
        hub = LiveHub("unused.db")
        slow: asyncio.Queue[bytes | None] = asyncio.Queue(CLIENT_QUEUE)
        quick: asyncio.Queue[bytes | None] = asyncio.Queue(CLIENT_QUEUE)
        hub.clients |= {slow, quick}
        for n in range(CLIENT_QUEUE):
            hub.publish(event("move", {"id": 1, "move": str(n)}))
            quick.get_nowait()  # the quick client keeps up; the slow one reads nothing
        hub.publish(event("move", {"id": 1, "move": "over"}))
        assert slow not in hub.clients and quick in hub.clients
        assert slow.qsize() == 1 and slow.get_nowait() is None  # its handler stops
        assert b"over" in (quick.get_nowait() or b"")

    asyncio.run(scenario())


@pytest.fixture(scope="module")
def small_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("served")
    done = run_tournament(folder)
    assert done.returncode == 0, done.stderr
    return folder / "t.db"


def test_server_answers_only_get_on_its_routes(small_db: Path) -> None:
    import aiohttp

    async def scenario() -> None:
        hub = LiveHub(str(small_db))
        async with serving(hub, "127.0.0.1", 0) as url, aiohttp.ClientSession() as http:
            assert url.startswith("http://127.0.0.1:")
            async with http.get(url) as page:
                assert page.status == 200
                data = embedded_data(await page.text())
                assert [e["name"] for e in data["engines"]] == ["guti", INJECTION]
            for method, path, status in (("POST", "", 405), ("PUT", "events", 405),
                                         ("GET", "etc/passwd", 404), ("GET", "../t.db", 404)):
                async with http.request(method, url + path) as answer:
                    assert answer.status == status, (method, path)
            async with http.get(url + "events") as stream:
                assert stream.headers["Content-Type"] == "text/event-stream"
                first = await stream.content.readline()
                assert first == b"event: hello\n"

    asyncio.run(scenario())


def test_hub_pushes_each_stored_game_with_new_standings(small_db: Path) -> None:
    with TournamentStore(str(small_db), create=False) as store:
        stored = list(store.records())
    hub = LiveHub(str(small_db))
    hub.load_tally()
    queue: asyncio.Queue[bytes | None] = asyncio.Queue(CLIENT_QUEUE)
    hub.clients.add(queue)
    from guti.referee.game.scheduled import ScheduledGame

    info, record = stored[0]
    job = ScheduledGame(info["game_id"], info["pair_id"], info["round"], 0, 1, None)
    watch = hub.started(job, record.white, record.black)
    assert watch is not None
    hub.finished(job, record)
    kinds = []
    while not queue.empty():
        raw = (queue.get_nowait() or b"").decode()
        kind = re.match(r"event: (\w+)", raw)
        assert kind
        kinds.append(kind.group(1))
        if kind.group(1) == "end":
            body = json.loads(raw.split("data: ", 1)[1])
            games = sum(row["games"] for row in body["tally"]["rows"]) // 2
            assert games == len(stored) + 1  # the stored games, and this one again
            assert body["game"][8] == " ".join(record.moves)
    assert kinds == ["start", "end"]
    assert hub.running == {}


def test_guti_serve_shows_a_database_read_only(small_db: Path) -> None:
    proc = subprocess.Popen([*GUTI, "serve", str(small_db), "-port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        found = re.search(r"at (http://127\.0\.0\.1:\d+/)", line)
        assert found, line
        with urllib.request.urlopen(found.group(1), timeout=30) as page:
            assert page.status == 200
            assert embedded_data(page.read().decode())["finished"] == 2
        request = urllib.request.Request(found.group(1), data=b"x", method="POST")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=30)
        assert refused.value.code == 405
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            assert proc.wait(timeout=30) == 0
        finally:  # never leave a server behind, even when the test fails
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    bad = subprocess.run([*GUTI, "serve", str(small_db.parent / "none.db")],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "none.db" in bad.stderr


def test_tournament_refuses_a_bad_serve_address(tmp_path: Path) -> None:
    done = subprocess.run([*GUTI, "tournament", "-engine", "cmd=a", "-engine", "cmd=b",
                           "-each", "tc=1", "-db", str(tmp_path / "x.db"), "-serve", "nowhere"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip() == ("guti tournament: -serve: 'nowhere' is not [HOST:]PORT "
                                   "with PORT 0..65535")
    assert not (tmp_path / "x.db").exists()


@pytest.mark.parametrize("signo", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.signals
def test_guti_serve_stops_on_a_signal_even_if_started_with_sigint_ignored(
    small_db: Path, signo: signal.Signals
) -> None:
    """A server started in the background (SIGINT ignored, as a shell's ``&`` does) still
    stops on Ctrl-C or SIGTERM: it installs its own handlers."""
    proc = subprocess.Popen([*GUTI, "serve", str(small_db), "-port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        assert proc.stdout is not None
        assert "serving" in proc.stdout.readline()
        proc.send_signal(signo)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
