"""The live page's state, in the server's own process: running games, stored games read
from the database as they come, the standings, and every connected browser's queue.

Why a process apart from the referee: rendering pages, JSON for hundreds of browsers and
idle sockets cost CPU and file descriptors, and in the referee's loop they made engines
lose on time. Here they cost only this process. The referee sends it what only the
referee knows (games starting, moves, the end of the run) over a bounded pipe
(:mod:`guti.referee.web.feed`); every finished game is read back from the database.

Stored games are read incrementally (only those after the last one read, by finishing
order), in one worker thread holding its own connection, so neither a large database nor
a fast-filling one holds up this loop. Each event is one small JSON line of a
server-sent event stream: ``hello`` (running games and whether the tournament still
runs, on connecting), ``start``, ``move``, ``end`` (one stored game), ``tally`` (the new
standings), ``state`` (the run started or ended). ``end`` and ``tally`` carry the
database's finishing number as the event id, so a browser that reconnects (its
``Last-Event-ID``) is sent the games it missed.

A stored game that cannot be read back (the database changed or damaged outside guti)
stops the reading at it: the games before it are shown and counted once, and the hub's
``warn`` is told one line (``guti serve`` prints it); the reading goes on from there once
the game reads well again.

A slow browser is dropped, never waited for: each client has a bounded queue; a client
whose queue is full is dropped (its queue emptied and closed; the browser reconnects and
catches up by its event id).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from guti.referee.game.file_lock import lock_owner
from guti.referee.stats.sprt import DECISION_KEY, SprtSpec, kept_decision
from guti.referee.storage.errors import DamagedGame
from guti.referee.storage.integrity import settings_damaged
from guti.referee.storage.store import StoreError, TournamentStore
from guti.referee.web.data import Tally, compact_game

#: Events a client may fall behind by before it is dropped.
CLIENT_QUEUE = 256
#: Seconds between looks at the database (new games, whether a run holds it).
WATCH_INTERVAL = 1.0
#: Stored games read per pass; a larger backlog is read over several passes.
READ_BATCH = 2000
#: Games a browser catching up is sent per read of the database.
MISSED_BATCH = 500

#: What a client's queue holds: (finishing number of a stored game or 0, the event), or
#: None to tell its handler to stop.
Queued = tuple[int, bytes] | None


def event(kind: str, data: Any, event_id: int | None = None) -> bytes:
    """One server-sent event (with ``id:`` when it moves a reader's place in the database)."""
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {kind}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


def remember_ply(game: dict[str, Any], info: dict[str, Any]) -> None:
    """Keep a running game's clocks, last score and depth from one ply's ``info``
    (``side``, ``clock``, ``score``, ``depth``), for a page that connects later."""
    if "clock" in info and info.get("side") in ("w", "b"):
        game.setdefault("clocks", {})[info["side"]] = info["clock"]
    for key in ("score", "depth"):
        if key in info:
            game[key] = info[key]


class GameReader:
    """The database side, used only from the hub's one worker thread (its own connection):
    games after the last one read, and the standings with them."""

    def __init__(self, db_path: str, sprt: SprtSpec | None) -> None:
        self.db_path = db_path
        self.sprt = sprt
        self.store: TournamentStore | None = None
        self.tally: Tally | None = None
        self.index: dict[str, int] = {}
        self.seq = 0
        #: Why the last reading of new games stopped short of the end (a game stored
        #: damaged), or None.
        self.trouble: str | None = None

    def _open(self) -> TournamentStore:
        if self.store is None:
            store = TournamentStore(self.db_path, create=False)
            try:
                settings = store.settings()
                names = store.engine_names()
                sprt = self.sprt or SprtSpec.of_settings(settings)
            except ValueError as exc:
                store.close()
                raise settings_damaged(self.db_path, str(exc)) from None
            except StoreError:
                store.close()
                raise
            self.store = store
            self.index = {n: i for i, n in enumerate(names)}
            self.tally = Tally(names, settings.get("format", "roundrobin"), sprt)
        return self.store

    def read_new(self) -> tuple[list[tuple[int, list[Any]]], dict[str, Any] | None, int]:
        """Games stored since the last call (at most :data:`READ_BATCH`) as (finishing
        number, compact game); the standings when there were any; the number of
        scheduled games."""
        store = self._open()
        assert self.tally is not None
        games = self._games(store, self.seq, READ_BATCH, count=True)
        if games:
            self.seq = games[-1][0]
        table, decided_now = self.tally.standings, False
        if table.sprt is not None and table.sprt_decided is None:  # taken since the last read?
            table.sprt_decided = kept_decision(store.meta(DECISION_KEY))
            decided_now = table.sprt_decided is not None
        snapshot = self.tally.snapshot() if games or decided_now else None
        return games, snapshot, store.count_scheduled()

    def games_between(self, after: int, upto: int, most: int) -> list[tuple[int, list[Any]]]:
        """The first ``most`` stored games numbered ``after < seq <= upto`` (for a browser
        catching up)."""
        return [g for g in self._games(self._open(), after, most, count=False) if g[0] <= upto]

    def _games(self, store: TournamentStore, after: int, limit: int | None,
               count: bool) -> list[tuple[int, list[Any]]]:
        rows = []
        try:
            for info, record in store.records_after(after):
                if not count and info["seq"] > self.seq:
                    break
                rows.append((info, record))
                if limit is not None and len(rows) >= limit:
                    break
        except DamagedGame as exc:  # the games before it are read; counted once below
            if not count:
                raise
            self.trouble = str(exc)
        else:
            if count:
                self.trouble = None
        games: list[tuple[int, list[Any]]] = []
        for info, record in rows:
            white, black = self.index.get(record.white, -1), self.index.get(record.black, -1)
            if count and self.tally is not None:
                self.tally.add(white, black, str(record.result),
                               str(record.reason) if record.reason is not None else None,
                               str(record.fault) if record.fault is not None else None,
                               info["pair_id"])
            games.append((info["seq"], compact_game(info["game_id"] + 1, info["round"], white,
                                                    black, record)))
        return games

    def close(self) -> None:
        if self.store is not None:
            self.store.close()
            self.store = None


def database_in_use(db_path: str) -> bool:
    """Whether a guti run holds the database now (its lock, seen in ``/proc/locks``)."""
    try:
        return lock_owner(os.stat(db_path)) is not None
    except OSError:
        return False


class LiveHub:
    """Running games, stored games as they come, and every connected browser's queue.

    ``fed``: the referee feeds this hub (``-serve``): the run is live until the feed says
    it ended. Otherwise (``guti serve``) the run is live while a guti holds the database.
    ``show_commands``: engine command lines appear on the page (off by default: they may
    name private paths)."""

    def __init__(self, db_path: str, sprt: SprtSpec | None = None, *, fed: bool = False,
                 show_commands: bool = False, warn: Callable[[str], None] | None = None
                 ) -> None:
        self.db_path = db_path
        self.warn = warn  # told a stored game that cannot be read, once
        self.trouble: str | None = None
        self.sprt = sprt
        self.fed = fed
        self.show_commands = show_commands
        self.running: dict[int, dict[str, Any]] = {}
        self.clients: set[asyncio.Queue[Queued]] = set()
        self.state = "live" if fed else "idle"
        self.stopped = ""
        self.report: str | None = None
        self.seq = 0
        self.scheduled = 0
        self.tally: dict[str, Any] | None = None
        self._reader = GameReader(db_path, sprt)
        self._worker = ThreadPoolExecutor(1, thread_name_prefix="guti-live-db")
        self._refreshing: asyncio.Lock | None = None
        self.ready = asyncio.Event()  # set once the database has been read (it exists)

    # -- the referee's messages (from the feed) -------------------------------------------
    def apply(self, message: dict[str, Any]) -> bool:
        """One message of the feed; returns True when stored games should be read now."""
        kind = message.get("t")
        if kind == "start":
            game = message["game"]
            self.running[int(game["id"])] = game
            self.publish(event("start", game))
        elif kind == "move":
            number, move = int(message["id"]), str(message["move"])
            game = self.running.get(number)
            if game is not None:
                game["moves"] = f"{game['moves']} {move}".strip()
                shown = {k: message[k] for k in ("side", "clock", "score", "depth")
                         if isinstance(message.get(k), (int, str))}
                remember_ply(game, shown)
                self.publish(event("move", {"id": number, "move": move, **shown}))
        elif kind == "end":
            self.running.pop(int(message["id"]), None)
            return True
        elif kind == "running":  # the feed overflowed: the whole state again
            self.running = {int(g["id"]): g for g in message["games"]}
            self.publish(event("hello", self.hello_data()))
        elif kind == "over":
            self.finish(str(message.get("stopped") or ""), message.get("report"))
        return False

    def finish(self, stopped: str, report: str | None) -> None:
        """The run ended: no game runs any more; browsers are told (and stop reconnecting)."""
        self.running.clear()
        self.state, self.stopped, self.report = "over", stopped, report
        self.publish(event("state", self.state_data()))

    # -- the database (in the worker thread) ----------------------------------------------
    async def refresh(self) -> None:
        """Read the games stored since the last look and push them, then the standings."""
        if self._refreshing is None:
            self._refreshing = asyncio.Lock()
        async with self._refreshing:
            loop = asyncio.get_running_loop()
            while True:
                try:
                    games, tally, scheduled = await loop.run_in_executor(
                        self._worker, self._reader.read_new)
                except StoreError:
                    return  # not created yet, or being written: next time
                self.ready.set()
                self.tell_trouble(self._reader.trouble)
                self.scheduled = scheduled
                for seq, game in games:
                    self.running.pop(int(game[0]), None)
                    self.seq = seq
                    self.publish(event("end", {"seq": seq, "game": game}, seq), seq)
                if tally is not None:
                    self.tally = tally
                    self.publish(event("tally", self.tally_data(), self.seq), self.seq)
                if len(games) < READ_BATCH:
                    return

    def tell_trouble(self, trouble: str | None) -> None:
        """Say a game that stops the reading, once (until it reads well again)."""
        if trouble != self.trouble and trouble is not None and self.warn is not None:
            self.warn(f"{trouble}; the page shows the games stored before it")
        self.trouble = trouble

    async def missed(self, after: int) -> AsyncIterator[bytes]:
        """The events a browser that has seen up to ``after`` lacks: the games stored since,
        and the standings. Read :data:`MISSED_BATCH` games at a time, each batch once the
        last was taken: a browser catching up on thousands of games holds one batch."""
        upto = self.seq
        if after >= upto:
            return
        loop = asyncio.get_running_loop()
        while after < upto:
            games = await loop.run_in_executor(
                self._worker, self._reader.games_between, after, upto, MISSED_BATCH)
            for seq, game in games:
                yield event("end", {"seq": seq, "game": game}, seq)
            if len(games) < MISSED_BATCH:
                break
            after = games[-1][0]
        yield event("tally", self.tally_data(), upto)

    def check_state(self) -> None:
        """``guti serve``: live while a guti holds the database (told when it changes)."""
        if self.fed:
            return
        state = "live" if database_in_use(self.db_path) else "idle"
        if state != self.state:
            self.state = state
            if state == "idle":
                self.running.clear()
            self.publish(event("state", self.state_data()))

    async def watch(self) -> None:
        """Look at the database every :data:`WATCH_INTERVAL` seconds, until cancelled."""
        while True:
            self.check_state()
            await self.refresh()
            await asyncio.sleep(WATCH_INTERVAL)

    def close(self) -> None:
        for queue in list(self.clients):
            self.drop(queue)
        self._worker.submit(self._reader.close)
        self._worker.shutdown(wait=True)

    # -- the browsers' side ---------------------------------------------------------------
    def publish(self, message: bytes, seq: int = 0) -> None:
        for queue in list(self.clients):
            try:
                queue.put_nowait((seq, message))
            except asyncio.QueueFull:
                self.drop(queue)

    def drop(self, queue: asyncio.Queue[Queued]) -> None:
        """Forget a client that fell behind: empty its queue and tell its handler to stop."""
        self.clients.discard(queue)
        while not queue.empty():
            queue.get_nowait()
        queue.put_nowait(None)

    def state_data(self) -> dict[str, Any]:
        return {"state": self.state, "stopped": self.stopped, "report": self.report}

    def tally_data(self) -> dict[str, Any]:
        return {"tally": self.tally, "scheduled": self.scheduled}

    def hello_data(self) -> dict[str, Any]:
        return {"running": list(self.running.values()), **self.state_data()}

    def hello(self) -> bytes:
        return event("hello", self.hello_data())
