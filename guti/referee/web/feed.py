"""``-serve``: the live page in a process of its own, fed by the referee over a bounded pipe.

The referee's side is :class:`LiveFeed`, the tournament's observer: each game starting,
each move and each game stored becomes one JSON line written to the server process's
standard input. Writing never waits: the pipe's transport buffers at most
:data:`FEED_LIMIT` bytes; past that, lines are not written and, once the server has
read its backlog, one ``running`` line (every running game, whole) puts it right again.
So a server that is slow, stopped or gone can never hold up a game; all it costs the
referee is a JSON line per move.

The server process (:func:`serve_fed`, run as ``python -m guti.referee.web.feed``) has
its own event loop and its own file descriptors; it reads the stored games from the
database itself. It is started in a session of its own, so Ctrl-C on the terminal
reaches only the referee; it ends when its input ends (the referee closed it, or died).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from guti.referee.stats.sprt import SprtSpec
from guti.referee.web.data import white_score
from guti.referee.web.live import remember_ply

if TYPE_CHECKING:
    from guti.referee.game.record import GameRecord
    from guti.referee.game.scheduled import ScheduledGame

#: Bytes of feed the referee keeps for a server that is not reading, at most.
FEED_LIMIT = 1 << 20
#: Seconds the referee waits for the server to start, and then to stop.
START_TIMEOUT = 60.0
STOP_TIMEOUT = 10.0
#: Seconds without a line of feed after which the server reads the database anyway.
IDLE_READ = 1.0


class LiveServerError(Exception):
    """The live page's server could not start (one line: why)."""


class _GameWatch:
    """The :class:`~guti.referee.game.observer.MoveObserver` of one game: forwards its moves."""

    def __init__(self, feed: LiveFeed, number: int) -> None:
        self.feed = feed
        self.number = number

    def moved(self, record: GameRecord, board: Any) -> None:
        self.feed.moved(self.number, record.moves[-1], _last_ply(record))


def _last_ply(record: GameRecord) -> dict[str, Any]:
    """What a live card shows of the ply just played: whose it was, the mover's clock
    (ms), the score from White's view (centipieces; forced results at the report's bound)
    and the depth, where the engine reported them."""
    ply = len(record.moves) - 1
    white = (ply % 2 == 0) == (record.first_side == "w")
    out: dict[str, Any] = {"side": "w" if white else "b"}
    if len(record.clock_ms) > ply and record.clock_ms[ply] is not None:
        out["clock"] = int(round(record.clock_ms[ply] or 0))
    info = record.search[ply] if len(record.search) > ply else None
    if info is not None:
        if info.score is not None:
            out["score"] = white_score(info.score, white)
        if info.depth is not None:
            out["depth"] = info.depth
    return out


class LiveFeed:
    """The tournament's observer when ``-serve`` is given: lines to the server process."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.running: dict[int, dict[str, Any]] = {}
        self.behind = False  # lines were left out: send the whole state when there is room

    # -- the tournament's side (called in its loop; returns at once) ----------------------
    def started(self, job: ScheduledGame, white: str, black: str) -> _GameWatch:
        number = job.game_id + 1
        opening = job.opening
        game = {"id": number, "white": white, "black": black,
                "start_fen": opening.fen if opening and opening.fen else "",
                "moves": " ".join(opening.moves) if opening else ""}
        self.running[number] = game
        self.send({"t": "start", "game": game})
        return _GameWatch(self, number)

    def moved(self, number: int, move: str, ply: dict[str, Any] | None = None) -> None:
        game = self.running.get(number)
        if game is None:
            return
        game["moves"] = f"{game['moves']} {move}".strip()
        info = ply or {}
        remember_ply(game, info)
        self.send({"t": "move", "id": number, "move": move, **info})

    def finished(self, job: ScheduledGame, record: GameRecord) -> None:
        number = job.game_id + 1
        self.running.pop(number, None)
        self.send({"t": "end", "id": number})

    # -- the pipe ---------------------------------------------------------------------------
    def _room(self) -> bool:
        stdin = self.process.stdin
        if stdin is None or stdin.is_closing():
            return False
        return stdin.transport.get_write_buffer_size() < FEED_LIMIT

    def send(self, message: dict[str, Any]) -> None:
        """Write one line if the server keeps up; else leave it out (and catch up later)."""
        if not self._room():
            self.behind = True
            return
        stdin = self.process.stdin
        assert stdin is not None
        if self.behind:
            if stdin.transport.get_write_buffer_size() > FEED_LIMIT // 2:
                return
            self.behind = False
            stdin.write(_line({"t": "running", "games": list(self.running.values())}))
            if message["t"] in ("start", "move"):
                return  # already in the whole state just sent
        stdin.write(_line(message))

    async def close(self, stopped: str, report: str | None,
                    within: float | None = None) -> None:
        """The run ended: tell the server, close its input and wait for it to stop, for
        ``within`` s in all (:data:`STOP_TIMEOUT` by default); then it is killed (a server
        stopped with SIGSTOP or stuck never drains its input), never an error of the run."""
        with contextlib.suppress(ConnectionError, RuntimeError, TimeoutError):
            await asyncio.wait_for(self._ended(stopped, report),
                                   STOP_TIMEOUT if within is None else within)
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
            await self.process.wait()

    async def _ended(self, stopped: str, report: str | None) -> None:
        stdin = self.process.stdin
        if stdin is not None and not stdin.is_closing():
            stdin.write(_line({"t": "over", "stopped": stopped, "report": report}))
            stdin.close()
            await stdin.wait_closed()
        await self.process.wait()


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


async def start_live_server(db_path: str, host: str, port: int, sprt: SprtSpec | None,
                            show_commands: bool = False) -> tuple[LiveFeed, str]:
    """Start the server process; returns its feed and the page's URL once it listens."""
    spec = json.dumps({"db": db_path, "host": host, "port": port, "commands": show_commands,
                       "sprt": asdict(sprt) if sprt is not None else None})
    try:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "guti.referee.web.feed", spec,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL, start_new_session=True)
    except OSError as exc:
        raise LiveServerError(f"cannot start the live page's server ({sys.executable}: "
                              f"{exc.strerror or exc})") from None
    assert process.stdout is not None
    try:
        line = (await asyncio.wait_for(process.stdout.readline(), START_TIMEOUT)).decode()
    except TimeoutError:
        line = "error: the live page's server did not start in time"
    if not line.startswith("url "):
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()
        raise LiveServerError(line.removeprefix("error: ").strip()
                              or "the live page's server stopped before it listened")
    return LiveFeed(process), line[4:].strip()


async def serve_fed(db_path: str, host: str, port: int, sprt: SprtSpec | None,
                    show_commands: bool) -> int:
    """The server process: serve the page and apply the referee's lines until they end."""
    from guti.referee.web.live import LiveHub
    from guti.referee.web.server import listen_error, serving

    hub = LiveHub(db_path, sprt, fed=True, show_commands=show_commands)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 24)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    try:
        await hub.refresh()
        try:
            context = serving(hub, host, port)
            url = await context.__aenter__()
        except OSError as exc:
            print(f"error: cannot listen on {host}:{port}: {listen_error(exc)}", flush=True)
            return 2
        print(f"url {url}", flush=True)
        try:
            await _follow(hub, reader)
        finally:
            await context.__aexit__(None, None, None)
    finally:
        hub.close()
    return 0


async def _follow(hub: Any, reader: asyncio.StreamReader) -> None:
    """Apply each line of the feed; read the database when a game was stored (and after
    :data:`IDLE_READ` seconds without a line); at the end of the run, its last games
    first, then its end. A game stored while a read is under way is read by the next one,
    begun as soon as that read is done."""
    pending: asyncio.Task[None] | None = None
    wanted = False  # a read asked for and not begun yet

    async def reads() -> None:
        nonlocal wanted
        while wanted:
            wanted = False
            await hub.refresh()

    while True:
        try:
            line = await asyncio.wait_for(reader.readline(), IDLE_READ)
        except TimeoutError:
            line = None
        except ValueError:  # a line over the reader's limit: not from a referee; skip it
            continue
        if line == b"":
            break
        message = _message(line) if line else None
        if message is not None and message.get("t") == "over":
            if pending is not None:
                await pending
            await hub.refresh()
        try:
            stored = message is not None and hub.apply(message)
        except (KeyError, TypeError, ValueError):  # not a line a referee writes: ignored
            stored = False
        wanted = wanted or line is None or stored
        if wanted and (pending is None or pending.done()):
            pending = asyncio.create_task(reads())
    if pending is not None:
        await pending
    if hub.state != "over":
        await hub.refresh()
        hub.finish("the tournament stopped", None)


def _message(line: bytes) -> dict[str, Any] | None:
    try:
        message = json.loads(line)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


def main() -> int:
    """``python -m guti.referee.web.feed SPEC``: the server process of ``-serve``."""
    try:
        spec = json.loads(sys.argv[1])
        sprt = SprtSpec.of_settings(spec)
        return asyncio.run(serve_fed(spec["db"], spec["host"], int(spec["port"]), sprt,
                                     bool(spec.get("commands"))))
    except KeyboardInterrupt:
        return 0
    except Exception as exc:  # the referee shows this one line; games go on without a page
        with contextlib.suppress(OSError):
            print(f"error: {type(exc).__name__}: {exc}", flush=True)
        return 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
