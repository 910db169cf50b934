"""The live server without a browser: fixed read-only routes, loopback by default, slow
clients dropped, every stored game pushed with the standings, ``guti serve`` on a database,
and the server's limits (connections, idle sockets, headers, Host) failing quietly.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("aiohttp", reason="the live server needs aiohttp (the web extra)")

from guti.referee.config.args import CliError  # noqa: E402
from guti.referee.config.tournament import serve_address  # noqa: E402
from guti.referee.storage.store import TournamentStore  # noqa: E402
from guti.referee.web.live import CLIENT_QUEUE, LiveHub, Queued, event  # noqa: E402
from guti.referee.web.server import allowed_hosts, host_allowed, parse_address, serving  # noqa: E402
from tests.conftest import GUTI, killed_at_end, survivors, wait_for  # noqa: E402
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
        slow: asyncio.Queue[Queued] = asyncio.Queue(CLIENT_QUEUE)
        quick: asyncio.Queue[Queued] = asyncio.Queue(CLIENT_QUEUE)
        hub.clients |= {slow, quick}
        for n in range(CLIENT_QUEUE):
            hub.publish(event("move", {"id": 1, "move": str(n)}))
            quick.get_nowait()  # the quick client keeps up; the slow one reads nothing
        hub.publish(event("move", {"id": 1, "move": "over"}))
        assert slow not in hub.clients and quick in hub.clients
        assert slow.qsize() == 1 and slow.get_nowait() is None  # its handler stops
        item = quick.get_nowait()
        assert item is not None and b"over" in item[1]
        hub.close()

    asyncio.run(scenario())


def test_host_header_must_name_the_bound_address() -> None:
    loopback = allowed_hosts("127.0.0.1", 8080)
    for good in ("127.0.0.1:8080", "localhost:8080", "LOCALHOST:8080", "[::1]:8080"):
        assert host_allowed(good, loopback), good
    for bad in ("evil.example:8080", "evil.example", "", "127.0.0.2:8080"):
        assert not host_allowed(bad, loopback), bad
    lan = allowed_hosts("192.168.1.5", 80)
    assert host_allowed("192.168.1.5", lan) and not host_allowed("localhost", lan)
    anywhere = allowed_hosts("0.0.0.0", 80)
    assert host_allowed("10.1.2.3:80", anywhere) and host_allowed("[fe80::1]:80", anywhere)
    assert not host_allowed("rebound.example:80", anywhere)


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
                                         ("GET", "etc/passwd", 404), ("GET", "../t.db", 404),
                                         ("POST", "games.pdn", 405)):
                async with http.request(method, url + path) as answer:
                    assert answer.status == status, (method, path)
            async with http.get(url + "games.pdn") as pdn:
                assert pdn.status == 200
                assert pdn.headers["Content-Disposition"] == 'attachment; filename="games.pdn"'
                with TournamentStore(str(small_db), create=False) as store:
                    from guti.referee.storage.export import write_pdn

                    expected = io.StringIO()
                    write_pdn(store, expected)
                assert await pdn.text() == expected.getvalue() != ""
            # One game alone: its record as that file has it; a game not stored: 404.
            first_game = expected.getvalue().split("\n\n[Event")[0] + "\n"
            async with http.get(url + "games.pdn?game=1") as one:
                assert one.status == 200
                assert one.headers["Content-Disposition"] == 'attachment; filename="game-1.pdn"'
                assert await one.text() == first_game
            for wanted in ("999", "0", "x", "-1", "1" * 12, "\u00b2", "\u0663"):
                async with http.get(url + "games.pdn?game=" + wanted) as missing:
                    assert missing.status == 404, wanted
            async with http.get(url + "events") as stream:
                assert stream.headers["Content-Type"] == "text/event-stream"
                first = await stream.content.readline()
                assert first == b"event: hello\n"

    asyncio.run(scenario())


def _events(queue: asyncio.Queue[Queued]) -> list[tuple[str, dict]]:
    """The events waiting in a client's queue, as (kind, data)."""
    out = []
    while not queue.empty():
        item = queue.get_nowait()
        assert item is not None
        raw = item[1].decode()
        kind = re.search(r"^event: (\w+)$", raw, re.M)
        assert kind
        out.append((kind.group(1), json.loads(raw.split("data: ", 1)[1])))
    return out


def test_hub_pushes_each_stored_game_with_new_standings(small_db: Path) -> None:
    with TournamentStore(str(small_db), create=False) as store:
        stored = list(store.records())

    async def scenario() -> None:
        hub = LiveHub(str(small_db), fed=True)
        queue: asyncio.Queue[Queued] = asyncio.Queue(CLIENT_QUEUE)
        hub.clients.add(queue)
        info, record = stored[0]
        game = {"id": info["game_id"] + 1, "white": record.white, "black": record.black,
                "start_fen": "", "moves": ""}
        assert not hub.apply({"t": "start", "game": game})
        assert not hub.apply({"t": "move", "id": game["id"], "move": record.moves[0]})
        assert hub.apply({"t": "end", "id": game["id"]})  # stored: read the database now
        await hub.refresh()
        events = _events(queue)
        assert [k for k, _ in events] == ["start", "move"] + ["end"] * len(stored) + ["tally"]
        ends = [d for k, d in events if k == "end"]
        assert [e["seq"] for e in ends] == [i["seq"] for i, _ in stored]
        assert ends[0]["game"][8] == " ".join(record.moves)
        tally = events[-1][1]["tally"]
        assert sum(row["games"] for row in tally["rows"]) // 2 == len(stored)
        assert hub.running == {}
        await hub.refresh()  # nothing new: nothing read again, nothing pushed
        assert queue.empty()
        # A browser that had seen only the first game is sent the rest, then the standings.
        missed = [m.decode() async for m in hub.missed(ends[0]["seq"])]
        assert len(missed) == len(stored)
        assert missed[0].startswith(f"id: {ends[1]['seq']}\nevent: end")
        assert "event: tally" in missed[-1]
        assert [m async for m in hub.missed(hub.seq)] == []
        # read a game at a time, the browser is sent the same
        from guti.referee.web import live as live_module

        batch, live_module.MISSED_BATCH = live_module.MISSED_BATCH, 1
        try:
            assert [m.decode() async for m in hub.missed(ends[0]["seq"])] == missed
        finally:
            live_module.MISSED_BATCH = batch
        hub.apply({"t": "over", "stopped": "SPRT: H1 accepted", "report": "/x/r.html"})
        kind, state = _events(queue)[-1]
        assert (kind, state) == ("state", {"state": "over", "stopped": "SPRT: H1 accepted",
                                           "report": "/x/r.html"})
        hub.close()

    asyncio.run(scenario())


def _copy(db: Path, folder: Path) -> Path:
    """A copy of the database (through SQLite, whatever its journal holds)."""
    copy = folder / "copy.db"
    with sqlite3.connect(db) as source, sqlite3.connect(copy) as target:
        source.backup(target)
    return copy


def _add_game(db: Path, **changes: object) -> int:
    """Store the first game again as a new one, the last to finish (with ``changes`` to
    its columns); its finishing number."""
    with sqlite3.connect(db) as conn:
        columns = [row[1] for row in conn.execute("PRAGMA table_info(games)")]
        first = conn.execute("SELECT * FROM games ORDER BY seq LIMIT 1").fetchone()
        row = dict(zip(columns, first, strict=True))
        seq, top = conn.execute("SELECT MAX(seq), MAX(game_id) FROM games").fetchone()
        row.update(seq=seq + 1, game_id=top + 1, **changes)
        conn.execute(f"INSERT INTO games ({', '.join(columns)}) VALUES "
                     f"({', '.join('?' * len(columns))})", list(row.values()))
    return int(row["seq"])


def _games_counted(tally: dict[str, Any]) -> int:
    return sum(row["games"] for row in tally["rows"]) // 2


def test_a_game_stored_damaged_stops_the_reading_once_and_counts_nothing_twice(
        small_db: Path, tmp_path: Path) -> None:
    """A game that cannot be read back (changed outside guti) while the page follows the
    database: the games before it are shown and counted once, one line says what is
    wrong, and once it reads well again the reading goes on from there."""
    db = _copy(small_db, tmp_path)
    warnings: list[str] = []

    async def scenario() -> None:
        hub = LiveHub(str(db), warn=warnings.append)
        await hub.refresh()
        assert hub.tally is not None
        before = _games_counted(hub.tally)
        good = _add_game(db)
        bad = _add_game(db, elapsed_ms="{")
        after = _add_game(db)
        queue: asyncio.Queue[Queued] = asyncio.Queue(CLIENT_QUEUE)
        hub.clients.add(queue)
        await hub.refresh()
        await hub.refresh()
        events = _events(queue)
        assert [d["seq"] for k, d in events if k == "end"] == [good]
        assert _games_counted(hub.tally) == before + 1
        [line] = warnings
        assert re.fullmatch(rf"{re.escape(str(db))}: game \d+ is stored damaged \(.*\); "
                            r"the page shows the games stored before it", line), line
        with sqlite3.connect(db) as conn:  # mended: read on
            conn.execute("UPDATE games SET elapsed_ms = (SELECT elapsed_ms FROM games "
                         "WHERE seq = ?) WHERE seq = ?", (good, bad))
        await hub.refresh()
        events = _events(queue)
        assert [d["seq"] for k, d in events if k == "end"] == [bad, after]
        assert _games_counted(hub.tally) == before + 3 and len(warnings) == 1
        hub.close()

    asyncio.run(scenario())


def test_guti_serve_says_a_game_stored_damaged_in_one_line(small_db: Path,
                                                           tmp_path: Path) -> None:
    db = _copy(small_db, tmp_path)
    proc, address = _serve(db)
    try:
        with urllib.request.urlopen(f"http://{address}/", timeout=30) as page:
            assert page.status == 200  # the database was read
        _add_game(db, result="won")
        assert proc.stderr is not None
        line = proc.stderr.readline()  # the next look at the database finds it
        assert re.fullmatch(r"guti serve: .*copy\.db: game \d+ is stored damaged \(.*'won'.*\); "
                            r"the page shows the games stored before it\n", line), line
    finally:
        rest = _stop(proc)
    assert rest == ""


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
            assert proc.wait(timeout=30) == 130  # as a shell reports Ctrl-C
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


@pytest.mark.parametrize("signo", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
@pytest.mark.signals
def test_guti_serve_stops_on_a_signal_even_if_started_with_sigint_ignored(
    small_db: Path, signo: signal.Signals
) -> None:
    """A server started in the background (SIGINT ignored, as a shell's ``&`` does) still
    stops on Ctrl-C, SIGTERM or SIGHUP: it installs its own handlers. It exits as a shell
    reports a command the signal ended (130, 143, 129)."""
    proc = subprocess.Popen([*GUTI, "serve", str(small_db), "-port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        assert proc.stdout is not None
        assert "serving" in proc.stdout.readline()
        proc.send_signal(signo)
        assert proc.wait(timeout=30) == 128 + signo
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _serve(db: Path, *extra: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([*GUTI, "serve", str(db), "-port", "0", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    found = re.search(r"at http://(127\.0\.0\.1:\d+)/", proc.stdout.readline())
    assert found
    return proc, found.group(1)


def _stop(proc: subprocess.Popen[str]) -> str:
    """Stop a ``guti serve``; returns what it wrote on stderr."""
    proc.send_signal(signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130  # as a shell reports Ctrl-C
    return err


def _raw(address: str, request: bytes) -> bytes:
    """Send raw bytes to the server; returns all it answers until it closes."""
    host, port = address.split(":")
    with socket.create_connection((host, int(port)), timeout=30) as conn:
        conn.sendall(request)
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    return answer


def test_oversized_or_misdirected_requests_are_refused_quietly(small_db: Path) -> None:
    proc, address = _serve(small_db)
    try:
        host = f"Host: {address}\r\n".encode()
        long_url = b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\n" + host + b"Connection: close\r\n\r\n"
        long_header = b"GET / HTTP/1.1\r\n" + host + b"X-Big: " + b"b" * 9000 + b"\r\n\r\n"
        many = b"GET / HTTP/1.1\r\n" + host + b"".join(
            b"X-%d: 1\r\n" % n for n in range(2000)) + b"\r\n"
        for request in (long_url, long_header, many):
            status = _raw(address, request).split(b"\r\n", 1)[0]
            assert re.match(rb"HTTP/1\.[01] (400|413|414|431) ", status), status
        rebound = b"GET / HTTP/1.1\r\nHost: attacker.example\r\nConnection: close\r\n\r\n"
        assert _raw(address, rebound).startswith(b"HTTP/1.1 421 ")
        good = f"GET / HTTP/1.1\r\nHost: localhost:{address.split(':')[1]}\r\n" \
               "Connection: close\r\n\r\n".encode()
        page = _raw(address, good)
        assert page.startswith(b"HTTP/1.1 200 ")
        # Engine command lines are not on the page unless asked for.
        data = embedded_data(page.split(b"\r\n\r\n", 1)[1].decode())
        assert all("python" not in e["command"] for e in data["engines"])
        # HEAD: the headers alone, so the next answer on the connection starts right after
        for path in ("/", "/games.pdn", "/events"):
            both = _raw(address, (f"HEAD {path} HTTP/1.1\r\n{host.decode()}\r\n"
                                  f"GET /games.pdn?game=1 HTTP/1.1\r\n{host.decode()}"
                                  "Connection: close\r\n\r\n").encode())
            head, after = both.split(b"\r\n\r\n", 1)
            assert head.startswith(b"HTTP/1.1 200 "), head
            assert after.startswith(b"HTTP/1.1 200 "), (path, after[:80])
    finally:
        err = _stop(proc)
    assert err == ""  # no traceback, no log line on the terminal
    proc, address = _serve(small_db, "-commands")
    try:
        page = _raw(address, f"GET / HTTP/1.1\r\nHost: {address}\r\nConnection: close"
                             "\r\n\r\n".encode())
        data = embedded_data(page.split(b"\r\n\r\n", 1)[1].decode())
        assert any("python" in e["command"] for e in data["engines"])
    finally:
        assert _stop(proc) == ""


def test_idle_connections_are_closed_and_capped(small_db: Path) -> None:
    async def request_page(host: str, port: str) -> bytes:
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(f"GET / HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n"
                     .encode())
        answer = await asyncio.wait_for(reader.read(), 30)
        writer.close()
        return answer

    async def scenario() -> None:
        hub = LiveHub(str(small_db))
        # The cap: idle connections are kept (for far longer than this test waits) ...
        async with serving(hub, "127.0.0.1", 0, max_connections=3, idle_timeout=600) as url:
            host, port = url.removeprefix("http://").rstrip("/").split(":")
            idle = [await asyncio.open_connection(host, int(port)) for _ in range(3)]
            # ... but one over the cap is closed at once, with nothing said.
            reader, writer = await asyncio.open_connection(host, int(port))
            assert await asyncio.wait_for(reader.read(), 30) == b""
            writer.close()
            idle[0][1].close()
            await idle[0][1].wait_closed()
            # A place freed is a place for the next request (once the server saw it free).
            for _ in range(1000):  # each refused try is answered at once: a bounded loop
                if answer := await request_page(host, port):
                    break
            assert answer.startswith(b"HTTP/1.1 200 ")
            for _, w in idle[1:]:
                w.close()
        # Idle connections (no request, or half a request) are closed by the server.
        async with serving(hub, "127.0.0.1", 0, idle_timeout=0.5) as url:
            host, port = url.removeprefix("http://").rstrip("/").split(":")
            idle = [await asyncio.open_connection(host, int(port)) for _ in range(3)]
            idle[0][1].write(b"GET / HTTP/1.1\r\nHo")
            for reader, writer in idle:
                assert await asyncio.wait_for(reader.read(), 30) == b""
                writer.close()
            assert (await request_page(host, port)).startswith(b"HTTP/1.1 200 ")
        hub.close()

    asyncio.run(scenario())


def test_the_server_process_follows_the_feed_and_ends_with_the_run(small_db: Path) -> None:
    """``-serve``'s server in its own process: a start and a move from the referee reach a
    browser's stream; closing the feed ends the stream with the end of the run."""
    import aiohttp

    from guti.referee.web.feed import start_live_server

    async def scenario() -> None:
        feed, url = await start_live_server(str(small_db), "127.0.0.1", 0, None)
        assert feed.process.returncode is None
        async with aiohttp.ClientSession() as http:
            async with http.get(url + "events?since=0") as stream:
                hello = json.loads((await _next_event(stream))[1])
                assert hello["state"] == "live" and hello["running"] == []
                kinds = [(await _next_event(stream))[0] for _ in range(3)]
                assert kinds == ["end", "end", "tally"]  # the stored games it had missed
                feed.send({"t": "start", "game": {"id": 9, "white": "a", "black": "b",
                                                  "start_fen": "", "moves": ""}})
                feed.send({"t": "move", "id": 9, "move": "c3-c4"})
                assert await _next_event(stream) == ("start", json.dumps(
                    {"id": 9, "white": "a", "black": "b", "start_fen": "", "moves": ""},
                    separators=(",", ":")))
                assert (await _next_event(stream))[0] == "move"
                await feed.close("every game played", "/tmp/r.html")
                kind, data = await _next_event(stream)
                assert kind == "state" and json.loads(data)["state"] == "over"
                assert json.loads(data)["report"] == "/tmp/r.html"
        assert feed.process.returncode == 0

    asyncio.run(scenario())


async def _next_event(stream: Any) -> tuple[str, str]:
    """The next (kind, data) of a server-sent event stream."""
    kind = data = ""
    while True:
        line = (await asyncio.wait_for(stream.content.readline(), 60)).decode()
        assert line, "the stream ended"
        if line.startswith("event: "):
            kind = line[7:].strip()
        elif line.startswith("data: "):
            data = line[6:].strip()
        elif line == "\n" and kind:
            return kind, data


def test_a_dead_server_process_costs_the_referee_nothing(
        small_db: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """The referee goes on writing moves to a server that died: nothing is raised, nothing
    is printed, and closing the feed returns."""
    from guti.referee.web.feed import start_live_server

    async def scenario() -> None:
        feed, _ = await start_live_server(str(small_db), "127.0.0.1", 0, None)
        feed.process.kill()
        await feed.process.wait()
        for n in range(1000):
            feed.send({"t": "move", "id": 1, "move": str(n)})
        await feed.close("every game played", None)
        assert feed.process.returncode is not None

    asyncio.run(scenario())
    assert capfd.readouterr().err == ""


def test_a_stopped_server_process_is_killed_at_the_end_and_the_run_ends_well(
        small_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server stopped (SIGSTOP) while the referee fed it: its input fills up and never
    drains. Closing the feed waits a while for it, then kills it; nothing is raised (the
    run ends as it would have), nothing is left running."""
    from guti.referee.web import feed as feed_module
    from guti.referee.web.feed import start_live_server

    monkeypatch.setattr(feed_module, "STOP_TIMEOUT", 0.5)  # the waits, shortened

    async def scenario() -> None:
        feed, _ = await start_live_server(str(small_db), "127.0.0.1", 0, None)
        os.kill(feed.process.pid, signal.SIGSTOP)
        for n in range(20_000):  # past the pipe's and the feed's buffers
            feed.send({"t": "move", "id": 1, "move": f"{n:08d}" * 8})
        assert feed.behind
        await feed.close("every game played", None)
        assert feed.process.returncode == -signal.SIGKILL

    asyncio.run(scenario())


def test_the_games_pdn_is_made_once_for_many_asking_and_never_holds_the_page_up(
        small_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """While the whole-file PDN is being made (held here until the page has answered),
    the page answers; the five clients that asked for the PDN meanwhile all get the one
    file made."""
    import threading

    import aiohttp

    from guti.referee.web import server

    made: list[int] = []
    page_done = threading.Event()
    real = server._games_pdn

    def held_export(db_path: str, number: int | None = None) -> str | None:
        if number is None:
            made.append(1)
            assert page_done.wait(60), "the page never answered while the PDN was made"
        return real(db_path, number)

    monkeypatch.setattr(server, "_games_pdn", held_export)

    async def scenario() -> None:
        hub = LiveHub(str(small_db))
        async with serving(hub, "127.0.0.1", 0) as url, aiohttp.ClientSession() as http:
            async def pdn() -> str:
                async with http.get(url + "games.pdn") as answer:
                    assert answer.status == 200
                    return await answer.text()

            exports = [asyncio.create_task(pdn()) for _ in range(5)]
            async with http.get(url) as page:
                assert page.status == 200 and "<html" in (await page.text())
            page_done.set()
            texts = await asyncio.gather(*exports)
        assert made == [1] and len(set(texts)) == 1 and texts[0].count("[Event ") >= 2

    asyncio.run(scenario())


def test_a_port_in_use_is_one_line(small_db: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = subprocess.run([*GUTI, "serve", str(small_db), "-port", str(port)],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 2
        assert done.stderr == f"guti serve: cannot listen on 127.0.0.1:{port}: " \
                              "Address already in use\n"
        done = subprocess.run([*GUTI, "tournament", "-engine", "cmd=a", "-engine", "cmd=b",
                               "-each", "tc=1", "-db", str(small_db.parent / "busy.db"),
                               "-serve", str(port)], capture_output=True, text=True, timeout=60)
        assert done.returncode == 2
        assert done.stderr == f"guti tournament: -serve {port}: cannot listen on " \
                              f"127.0.0.1:{port}: Address already in use\n"
        assert not (small_db.parent / "busy.db").exists()


class _Pipe:
    """A stand-in for the server's standard input: a transport whose buffer we set."""

    def __init__(self) -> None:
        self.buffered = 0
        self.lines: list[dict] = []
        self.transport = self

    def get_write_buffer_size(self) -> int:
        return self.buffered

    def is_closing(self) -> bool:
        return False

    def write(self, data: bytes) -> None:
        self.lines += [json.loads(line) for line in data.splitlines()]


def test_a_feed_that_falls_behind_leaves_lines_out_then_sends_the_whole_state() -> None:
    from types import SimpleNamespace

    from guti.referee.game.scheduled import ScheduledGame
    from guti.referee.web.feed import FEED_LIMIT, LiveFeed

    pipe = _Pipe()
    feed = LiveFeed(SimpleNamespace(stdin=pipe))  # type: ignore[arg-type]
    feed.started(ScheduledGame(0, 0, 1, 0, 1, None), "a", "b")
    feed.moved(1, "c3-c4", {"side": "w", "clock": 900})
    assert [m["t"] for m in pipe.lines] == ["start", "move"]
    pipe.buffered = FEED_LIMIT  # the server stopped reading: nothing more is written
    feed.moved(1, "e5-d4")
    assert len(pipe.lines) == 2 and feed.behind
    pipe.buffered = 0  # it caught up: the whole state first, then what follows
    feed.moved(1, "b2-c3")
    assert pipe.lines[2] == {"t": "running", "games": [
        {"id": 1, "white": "a", "black": "b", "start_fen": "", "moves": "c3-c4 e5-d4 b2-c3",
         "clocks": {"w": 900}}]}
    assert len(pipe.lines) == 3 and not feed.behind
    feed.moved(1, "d4-c5")
    assert pipe.lines[3] == {"t": "move", "id": 1, "move": "d4-c5"}


def test_a_game_stored_while_the_database_is_read_is_read_right_after(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The server's follower of the feed: a game stored while a read of the database is
    under way is read as soon as that read is done, while lines still flow (it used to
    wait for a second without a line, which never comes while games are played)."""
    from guti.referee.web import feed

    monkeypatch.setattr(feed, "IDLE_READ", 3600.0)  # no read for want of lines

    class Hub:
        state = "running"

        def __init__(self) -> None:
            self.stored = 0
            self.reads: list[int] = []  # games stored when each read began
            self.release = asyncio.Event()
            self.read_begun = asyncio.Event()

        def apply(self, message: dict[str, Any]) -> bool:
            self.stored += message["t"] == "end"
            return bool(message["t"] == "end")

        async def refresh(self) -> None:
            self.reads.append(self.stored)
            self.read_begun.set()
            await self.release.wait()

        def finish(self, why: str, standings: object) -> None:
            self.state = "over"

    async def main() -> list[int]:
        hub, reader = Hub(), asyncio.StreamReader()
        follower = asyncio.create_task(feed._follow(hub, reader))
        reader.feed_data(b'{"t": "end"}\n')
        await asyncio.wait_for(hub.read_begun.wait(), 30)  # read 1, held
        reader.feed_data(b'{"t": "end"}\n{"t": "move"}\n')  # game 2 while it reads
        await asyncio.wait_for(_until(lambda: hub.stored == 2), 30)
        hub.read_begun.clear()
        hub.release.set()
        await asyncio.wait_for(hub.read_begun.wait(), 30)  # read 2, with no line since
        reads = list(hub.reads)
        reader.feed_eof()
        await asyncio.wait_for(follower, 30)
        return reads

    assert asyncio.run(main()) == [1, 2]


async def _until(condition: Any) -> None:
    while not condition():
        await asyncio.sleep(0)


def test_the_live_sprt_path_stays_short_however_long_the_run(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The live page's tally takes a snapshot after every stored game; the SPRT path it
    sends is thinned as it grows, to about SPRT_POINTS points, ending at the last game
    (it kept one point a game: a 10,000-game run sent 10,000 with every game)."""
    from guti.referee.stats.sprt import SprtSpec
    from guti.referee.web import data

    monkeypatch.setattr(data, "SPRT_POINTS", 40)
    tally = data.Tally(["a", "b"], "roundrobin", SprtSpec(elo0=0.0, elo1=5.0))
    for game in range(1, 1001):
        tally.add(game % 2, 1 - game % 2, ("1-0", "0-1", "1/2-1/2")[game % 3], "no legal move", None,
                  (game - 1) // 2)
        path = tally.snapshot()["sprt"]["path"]
        assert len(path) <= 41
    assert path[-1][0] == 1000 and path[0][0] <= 50
    assert [p[0] for p in path] == sorted({p[0] for p in path})


@pytest.mark.signals
def test_an_aborted_run_with_a_stopped_server_ends_as_any_abort_does(tmp_path: Path) -> None:
    """The live page's server stopped (SIGSTOP), then the run aborted (SIGTERM): the
    server is given a short while and killed, within the bound an abort has, so the run
    ends as any aborted run does (standings, the ``-resume`` line, 130), not by the
    abort's last-resort exit; no process is left, the stopped server included."""
    from tests.test_closed_stdout import engine
    from tests.test_referee_pool import children_of, command_line

    with killed_at_end(subprocess.Popen(
            [*GUTI, "tournament", *engine("A", tmp_path), *engine("B", tmp_path),
             "-each", "tc=60+1", "-games", "2000", "-db", "s.db", "-serve", "0"],
            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)) as proc:
        assert proc.stdout is not None
        assert any(line.startswith("live page: ") for line in proc.stdout)
        [server] = [pid for pid in children_of(proc.pid)
                    if "guti.referee.web.feed" in command_line(pid)]
        # the games under way (their engines started): the run's own signal handling is
        wait_for(lambda: len(survivors(tmp_path / "pids")) >= 2, "the engines started", 60)
        os.kill(server, signal.SIGSTOP)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "did not finish in time" not in err, err
    assert "continue with the same command and -resume" in err, err
    assert " games stored in s.db" in out, out
    assert not os.path.exists(f"/proc/{server}")  # killed and reaped by the run
    assert survivors(tmp_path / "pids") == []


def test_the_database_file_alone_holds_a_served_runs_games(tmp_path: Path) -> None:
    """The live page's server reads the database until after the run has closed it, and
    reads only: the run folds its write-ahead log into the file as it closes, so that the
    database copied alone (without its ``-wal``) holds every game."""
    from tests.test_closed_stdout import engine

    done = subprocess.run([*GUTI, "tournament", *engine("A", tmp_path), *engine("B", tmp_path),
                           "-each", "tc=10+0.1", "-games", "4", "-db", "s.db", "-serve", "0"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "live page: " in done.stdout
    copy = tmp_path / "copy.db"
    copy.write_bytes((tmp_path / "s.db").read_bytes())
    with sqlite3.connect(copy) as conn:
        assert conn.execute("SELECT COUNT(*) FROM games").fetchone() == (4,)
    conn.close()
    assert survivors(tmp_path / "pids") == []
