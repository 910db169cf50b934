"""The live page: the report plus the boards of the games being played, pushed to browsers.

One aiohttp server in the tournament's own event loop. Why server-sent events: the page
only listens (no commands go back), an ``EventSource`` reconnects by itself, and each
event is one small JSON line: ``hello`` (the running games, on connecting), ``start``,
``move`` and ``end`` (the stored game and the new standings).

A slow browser never slows a game: the tournament calls :class:`LiveHub` synchronously
and the hub only ``put_nowait``s into each client's bounded queue; a client whose queue
is full is dropped (its queue is emptied and closed; the browser reconnects and gets a
fresh ``hello``). The server is read-only: two GET routes, nothing that starts a process
or touches a file, bound to loopback unless told otherwise.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import json
from collections.abc import AsyncIterator
from typing import Any

from aiohttp import web

from guti.referee.game.record import GameRecord
from guti.referee.game.scheduled import ScheduledGame
from guti.referee.stats.sprt import SprtSpec
from guti.referee.storage.store import StoreError, TournamentStore
from guti.referee.web.data import Tally, compact_game, report_data, sprt_from_settings
from guti.referee.web.report import render_page
from guti.rules import Board

#: Events a client may fall behind by before it is dropped.
CLIENT_QUEUE = 256
#: Seconds between looks at a database written by another process (``guti serve``).
WATCH_INTERVAL = 1.0

_HEADERS = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "no-referrer"}


def event(kind: str, data: Any) -> bytes:
    """One server-sent event."""
    return f"event: {kind}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


class _GameWatch:
    """The :class:`~guti.referee.game.observer.MoveObserver` of one game: forwards its moves."""

    def __init__(self, hub: LiveHub, number: int) -> None:
        self.hub = hub
        self.number = number

    def moved(self, record: GameRecord, board: Board) -> None:
        self.hub.moved(self.number, record.moves[-1])


class LiveHub:
    """Running games, the standings, and every connected browser's queue."""

    def __init__(self, db_path: str, sprt: SprtSpec | None = None) -> None:
        self.db_path = db_path
        self.sprt = sprt
        self.running: dict[int, dict[str, Any]] = {}
        self.clients: set[asyncio.Queue[bytes | None]] = set()
        self.tally: Tally | None = None
        self.names: list[str] = []

    # -- the tournament's side (called in its loop; returns at once) ----------------------
    def started(self, job: ScheduledGame, white: str, black: str) -> _GameWatch:
        number = job.game_id + 1
        opening = job.opening
        game = {"id": number, "white": white, "black": black,
                "start_fen": opening.fen if opening and opening.fen else "",
                "moves": " ".join(opening.moves) if opening else ""}
        self.running[number] = game
        self.publish(event("start", game))
        return _GameWatch(self, number)

    def moved(self, number: int, move: str) -> None:
        game = self.running.get(number)
        if game is None:
            return
        game["moves"] = f"{game['moves']} {move}".strip()
        self.publish(event("move", {"id": number, "move": move}))

    def finished(self, job: ScheduledGame, record: GameRecord) -> None:
        number = job.game_id + 1
        self.running.pop(number, None)
        if self.tally is None:
            self.load_tally()  # reads the database, which already holds this game
        else:
            self.tally.add(job.white, job.black, str(record.result),
                           str(record.reason) if record.reason is not None else None,
                           str(record.fault) if record.fault is not None else None, job.pair_id)
        if self.tally is None:
            return
        game = compact_game(number, job.round, job.white, job.black, record)
        self.publish(event("end", {"id": number, "game": game, "tally": self.tally.snapshot()}))

    def load_tally(self) -> None:
        """Standings of every game stored so far (then kept up to date by :meth:`finished`)."""
        try:
            with TournamentStore(self.db_path, create=False) as store:
                settings = store.settings()
                self.names = store.engine_names()
                self.tally = Tally(self.names, settings.get("format", "roundrobin"),
                                   self.sprt or sprt_from_settings(settings))
                for _gid, pair, white, black, result, reason, fault in store.results():
                    self.tally.add(white, black, result, reason, fault, pair)
        except StoreError:
            self.tally = None

    # -- the browsers' side ---------------------------------------------------------------
    def publish(self, message: bytes) -> None:
        for queue in list(self.clients):
            try:
                queue.put_nowait(message)
            except asyncio.QueueFull:
                self.drop(queue)

    def drop(self, queue: asyncio.Queue[bytes | None]) -> None:
        """Forget a client that fell behind: empty its queue and tell its handler to stop."""
        self.clients.discard(queue)
        while not queue.empty():
            queue.get_nowait()
        queue.put_nowait(None)

    def hello(self) -> bytes:
        return event("hello", {"running": list(self.running.values())})


_HUB = web.AppKey("hub", LiveHub)


async def _page(request: web.Request) -> web.Response:
    hub: LiveHub = request.app[_HUB]
    try:
        # In a thread: reading a large database must not hold up the games in this loop.
        page = await asyncio.to_thread(_render, hub.db_path, hub.sprt)
    except StoreError as exc:
        # The tournament is being created: a plain page that looks again in a second.
        waiting = ('<!DOCTYPE html><meta charset="utf-8"><meta http-equiv="refresh" content="1">'
                   f"<title>guti</title><p>no tournament to show yet ({html.escape(str(exc))})")
        return web.Response(text=waiting, status=503, content_type="text/html",
                            headers=_HEADERS)
    return web.Response(text=page, content_type="text/html", headers=_HEADERS)


def _render(db_path: str, sprt: SprtSpec | None) -> str:
    with TournamentStore(db_path, create=False) as store:
        return render_page(report_data(store, sprt), live=True)


async def _events(request: web.Request) -> web.StreamResponse:
    hub: LiveHub = request.app[_HUB]
    response = web.StreamResponse(headers={**_HEADERS, "Content-Type": "text/event-stream"})
    await response.prepare(request)
    queue: asyncio.Queue[bytes | None] = asyncio.Queue(CLIENT_QUEUE)
    hub.clients.add(queue)
    try:
        await response.write(hub.hello())
        while True:
            message = await queue.get()
            if message is None:
                break
            await response.write(message)
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        hub.clients.discard(queue)
    return response


def make_app(hub: LiveHub) -> web.Application:
    """The server's two read-only routes (any other method or path is refused)."""
    app = web.Application()
    app[_HUB] = hub
    app.router.add_get("/", _page)
    app.router.add_get("/events", _events)
    return app


def parse_address(text: str) -> tuple[str, int]:
    """``[HOST:]PORT`` (host 127.0.0.1 unless given); ValueError with a one-line reason."""
    host, colon, port = text.rpartition(":")
    host = host.strip("[]") if colon else "127.0.0.1"
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"{text!r} is not [HOST:]PORT with PORT 0..65535")
    return host or "127.0.0.1", int(port)


@contextlib.asynccontextmanager
async def serving(hub: LiveHub, host: str, port: int) -> AsyncIterator[str]:
    """Serve ``hub`` on ``host:port`` for the duration; yields the page's URL."""
    runner = web.AppRunner(make_app(hub), access_log=None, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    try:
        await site.start()
        bound = runner.addresses[0][1] if runner.addresses else port
        shown = f"[{host}]" if ":" in host else host
        yield f"http://{shown}:{bound}/"
    finally:
        for queue in list(hub.clients):
            hub.drop(queue)
        await runner.cleanup()


async def watch_database(hub: LiveHub) -> None:
    """For ``guti serve``: push every game another process stores (polls its count)."""
    seen = -1
    while True:
        try:
            with TournamentStore(hub.db_path, create=False) as store:
                count = store.count_finished()
                if seen < 0:
                    hub.load_tally()
                    seen = count
                elif count > seen:
                    _push_new_games(hub, store, seen)
                    seen = count
        except StoreError:
            pass
        await asyncio.sleep(WATCH_INTERVAL)


def _push_new_games(hub: LiveHub, store: TournamentStore, seen: int) -> None:
    names = store.engine_names()
    index = {n: i for i, n in enumerate(names)}
    for n, (info, record) in enumerate(store.records()):
        if n < seen:
            continue
        job = ScheduledGame(info["game_id"], info["pair_id"], info["round"],
                            index.get(record.white, -1), index.get(record.black, -1), None)
        hub.finished(job, record)
