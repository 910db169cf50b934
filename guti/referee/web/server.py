"""The live page's HTTP server: three read-only GET routes (the page, its event stream,
the games as PDN), and limits that fail quietly.

What it refuses, and how, so that no browser (or anything else on the network) can
exhaust it or fill guti's terminal:

- at most :data:`MAX_CONNECTIONS` open connections; one more is closed at once;
- a connection that sends no complete request within :data:`IDLE_TIMEOUT` seconds (an
  idle or half-open socket) is closed;
- a request line or header over 8 KB, or more than :data:`MAX_HEADERS` headers, gets 400;
- a ``Host`` header that names neither the bound address nor, on loopback, ``localhost``
  gets 421 (a page on another site cannot reach this one by DNS rebinding);
- no request is ever logged, and no error is printed: the server's loggers are silenced;
- an answer is written :data:`SEND_PIECE` bytes at a time, each piece once the client has
  taken the one before, so a client that does not read holds a piece of it, not all of
  it; one that takes nothing for :data:`SEND_TIMEOUT` seconds is dropped.

The page itself is rendered in a thread, one at a time, and kept (as bytes, shared by
every client) until a game is stored, so many browsers reloading cost one rendering per
stored game; the PDN of every game likewise, apart from the page, so that a long export
never holds the page up.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import io
import ipaddress
import logging
import os
import socket
from collections.abc import AsyncIterator, Awaitable
from typing import Any

from aiohttp import web

from guti.referee.storage.export import game_pdn, write_pdn
from guti.referee.storage.store import StoreError, TournamentStore
from guti.referee.web.data import report_data
from guti.referee.web.live import CLIENT_QUEUE, LiveHub, Queued
from guti.referee.web.report import render_page
from guti.rules.numbers import whole_number

#: Open connections at most (browsers hold one per event stream, plus page loads).
MAX_CONNECTIONS = 200
#: Bytes of an answer written at a time, and how long a client may take none of them.
SEND_PIECE = 1 << 16
SEND_TIMEOUT = 30.0
#: Seconds a connection may stay open without a complete request (then closed).
IDLE_TIMEOUT = 10.0
#: Seconds a page request waits for the database to exist (a run being created).
READY_TIMEOUT = 10.0
#: Headers in one request at most.
MAX_HEADERS = 64
#: Longest request line or header field, in bytes.
MAX_LINE = 8190

_HEADERS = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "no-referrer"}

#: A logger that says nothing: the server's own (aiohttp's) errors never reach a terminal.
QUIET = logging.getLogger("guti.web.quiet")
QUIET.addHandler(logging.NullHandler())
QUIET.propagate = False
QUIET.disabled = True

_HUB = web.AppKey("hub", LiveHub)
_HOSTS = web.AppKey("hosts", tuple)
_PAGE = web.AppKey("page", dict)
_PDN = web.AppKey("pdn", dict)


def allowed_hosts(host: str, port: int) -> tuple[frozenset[str], int]:
    """The names a ``Host`` header may give when the server is bound to ``host:port``
    (and that port): the bound address, plus ``localhost`` on loopback; on a wildcard
    address (0.0.0.0, ::), any address literal (``*``) and this machine's own names."""
    names = {host}
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        address = None
    if (address is not None and address.is_loopback) or host == "localhost":
        names |= {"localhost", "127.0.0.1", "::1"}
    if address is not None and address.is_unspecified:
        names |= {"*", socket.gethostname(), socket.getfqdn(), "localhost"}
    return frozenset(n.lower() for n in names), port


def host_allowed(header: str, allowed: tuple[frozenset[str], int]) -> bool:
    """Whether ``header`` (``name``, ``name:port``, ``[v6]:port``) is one of ``allowed``."""
    names, port = allowed
    value = header.strip().lower()
    if value.startswith("["):
        name, _, rest = value[1:].partition("]")
        given = rest.removeprefix(":") if rest.startswith(":") else ("" if not rest else "x")
    elif value.count(":") == 1:
        name, _, given = value.partition(":")
    else:
        name, given = value, ""
    if given and given != str(port):
        return False
    if name in names:
        return True
    if "*" in names:  # a wildcard bind: any address literal
        with contextlib.suppress(ValueError):
            ipaddress.ip_address(name)
            return True
    return False


@web.middleware
async def _check_host(request: web.Request, handler: Any) -> web.StreamResponse:
    if not host_allowed(request.headers.get("Host", ""), request.app[_HOSTS]):
        return web.Response(status=421, text="this server does not answer to that Host\n",
                            headers=_HEADERS)
    response: web.StreamResponse = await handler(request)
    return response


async def _page(request: web.Request) -> web.StreamResponse:
    hub = request.app[_HUB]
    cache = request.app[_PAGE]
    if not hub.ready.is_set():
        await hub.refresh()
    # A run creates its database just after its server starts: wait for it a little.
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(hub.ready.wait(), READY_TIMEOUT)
    key = (hub.seq, hub.state)
    async with cache["lock"]:
        if cache.get("key") != key:
            try:
                cache["body"] = (await asyncio.to_thread(_render, hub)).encode()
                cache["key"] = key
            except StoreError as exc:
                # The tournament is being created: a plain page that looks again in a second.
                waiting = ('<!DOCTYPE html><meta charset="utf-8">'
                           '<meta http-equiv="refresh" content="1"><title>guti</title>'
                           f"<p>no tournament to show yet ({html.escape(str(exc))})")
                return web.Response(text=waiting, status=503, content_type="text/html",
                                    headers=_HEADERS)
        body = cache["body"]
    return await _send(request, body, "text/html; charset=utf-8")


async def _send(request: web.Request, body: bytes, content_type: str,
                headers: dict[str, str] = _HEADERS) -> web.StreamResponse:
    """``body`` as the answer, :data:`SEND_PIECE` bytes at a time (see the module's
    docstring): the client is dropped when a piece waits :data:`SEND_TIMEOUT` s."""
    response = web.StreamResponse(headers={**headers, "Content-Type": content_type})
    response.content_length = len(body)
    await response.prepare(request)
    if request.method == "HEAD":  # the headers alone (its length included), never the body
        return response
    view = memoryview(body)
    try:
        for start in range(0, len(body), SEND_PIECE):
            await _within(response.write(view[start:start + SEND_PIECE]))
    except TimeoutError:
        if request.transport is not None:
            request.transport.abort()  # what it was sent, unread, goes with it
    except ConnectionError:
        pass
    return response


def _render(hub: LiveHub) -> str:
    with TournamentStore(hub.db_path, create=False) as store, store.snapshot():
        data = report_data(store, hub.sprt)  # its counts are of the games it lists
    if not hub.show_commands:
        for engine in data["engines"]:
            engine["command"] = "(not shown: guti serve -commands shows it)"
    data["live"] = hub.state_data()
    return render_page(data, live=True)


async def _pdn(request: web.Request) -> web.StreamResponse:
    """Every stored game as one PDN file (as ``guti export -pdn`` writes it), or with
    ``?game=N`` game N's record alone (as that file has it), made in a thread, one at a
    time; the whole file is kept until a game is stored, as the page is."""
    hub = request.app[_HUB]
    cache = request.app[_PDN]
    wanted = request.query.get("game", "")
    number = whole_number(wanted, 9)
    if wanted and not number:
        return web.Response(status=404, text="no such game\n", headers=_HEADERS)
    async with cache["lock"]:
        try:
            if number is not None:
                text = await asyncio.to_thread(_games_pdn, hub.db_path, number)
                body = None if text is None else text.encode()
            elif cache.get("key") != hub.seq or not hub.ready.is_set():
                body = cache["body"] = (await asyncio.to_thread(_games_pdn, hub.db_path)
                                        or "").encode()
                cache["key"] = hub.seq if hub.ready.is_set() else None
            else:
                body = cache["body"]
        except StoreError as exc:
            return web.Response(status=503, text=f"no games to give yet ({exc})\n",
                                headers=_HEADERS)
    if body is None:
        return web.Response(status=404, text="no such game\n", headers=_HEADERS)
    name = "games.pdn" if number is None else f"game-{number}.pdn"
    return await _send(request, body, "application/x-pdn; charset=utf-8", {
        **_HEADERS, "Content-Disposition": f'attachment; filename="{name}"'})


def _games_pdn(db_path: str, number: int | None = None) -> str | None:
    with TournamentStore(db_path, create=False) as store, store.snapshot():
        if number is not None:
            return game_pdn(store, number)
        out = io.StringIO()
        write_pdn(store, out)
    return out.getvalue()


def _since(request: web.Request) -> int | None:
    text = request.headers.get("Last-Event-ID") or request.query.get("since", "")
    return whole_number(text)


async def _events(request: web.Request) -> web.StreamResponse:
    hub = request.app[_HUB]
    response = web.StreamResponse(headers={**_HEADERS, "Content-Type": "text/event-stream"})
    await response.prepare(request)
    if request.method == "HEAD":  # the headers alone: no stream follows
        return response
    queue: asyncio.Queue[Queued] = asyncio.Queue(CLIENT_QUEUE)
    hub.clients.add(queue)
    try:
        await _within(response.write(hub.hello()))
        sent = since = _since(request)
        if since is not None:
            sent = max(since, hub.seq)
            async for message in hub.missed(since):
                await _within(response.write(message))
        while True:
            item = await queue.get()
            if item is None:
                break
            seq, message = item
            if seq and sent is not None and seq <= sent:
                continue  # a stored game (or standings) this browser has already
            await _within(response.write(message))
    except TimeoutError:  # it reads nothing: dropped, with what it was sent
        if request.transport is not None:
            request.transport.abort()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        hub.clients.discard(queue)
    return response


async def _within(write: Awaitable[None]) -> None:
    """A write to a client, which must take it within :data:`SEND_TIMEOUT` s."""
    await asyncio.wait_for(write, SEND_TIMEOUT)


def make_app(hub: LiveHub, host: str = "127.0.0.1", port: int = 0) -> web.Application:
    """The server's read-only routes: the page, its event stream and the games as PDN
    (any other method or path is refused)."""
    app = web.Application(middlewares=[_check_host], logger=QUIET)
    app[_HUB] = hub
    app[_HOSTS] = allowed_hosts(host, port)
    app[_PAGE] = {"lock": asyncio.Lock()}
    app[_PDN] = {"lock": asyncio.Lock()}
    app.router.add_get("/", _page)
    app.router.add_get("/events", _events)
    app.router.add_get("/games.pdn", _pdn)
    return app


def parse_address(text: str) -> tuple[str, int]:
    """``[HOST:]PORT`` (host 127.0.0.1 unless given); ValueError with a one-line reason."""
    host, colon, port = text.rpartition(":")
    host = host.strip("[]") if colon else "127.0.0.1"
    number = whole_number(port, 5)
    if number is None or number > 65535:
        raise ValueError(f"{text!r} is not [HOST:]PORT with PORT 0..65535")
    return host or "127.0.0.1", number


def listen_error(exc: OSError) -> str:
    """Why a server could not listen, in a few words ("Address already in use")."""
    if isinstance(exc, socket.gaierror) or not exc.errno or exc.errno < 0:
        # a host name that does not resolve (socket.create_server adds where it tried)
        return (exc.strerror or str(exc)).split(" (while attempting", 1)[0]
    return os.strerror(exc.errno)


class _Closed(asyncio.Protocol):
    """What a connection over :data:`MAX_CONNECTIONS` gets: closed at once, nothing said."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        transport.close()


def _quiet_errors(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """The loop's handler of stray errors (a socket reset mid-write): nothing printed."""


@contextlib.asynccontextmanager
async def serving(hub: LiveHub, host: str, port: int, *, max_connections: int = MAX_CONNECTIONS,
                  idle_timeout: float = IDLE_TIMEOUT) -> AsyncIterator[str]:
    """Serve ``hub`` on ``host:port`` for the duration; yields the page's URL."""
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(_quiet_errors)
    sock = socket.create_server((host, port), family=socket.AF_INET6 if ":" in host
                                else socket.AF_INET, backlog=128)
    bound = sock.getsockname()[1]
    runner = web.AppRunner(make_app(hub, host, bound), access_log=None, handle_signals=False,
                           shutdown_timeout=2, keepalive_timeout=idle_timeout, max_line_size=MAX_LINE,
                           max_field_size=MAX_LINE, max_headers=MAX_HEADERS, logger=QUIET)
    await runner.setup()
    handlers = runner.server
    assert handlers is not None

    # Connections are counted when accepted, not when aiohttp registers them (a moment
    # later): a burst accepted at once must not get past the limit.
    accepted = 0
    forget = handlers.connection_lost

    def lost(handler: Any, exc: BaseException | None = None) -> None:
        nonlocal accepted
        accepted -= 1
        forget(handler, exc)

    handlers.connection_lost = lost  # type: ignore[method-assign]

    def connection() -> asyncio.BaseProtocol:
        nonlocal accepted
        if accepted >= max_connections:
            return _Closed()
        accepted += 1
        return handlers()

    server = await loop.create_server(connection, sock=sock)
    try:
        shown = f"[{host}]" if ":" in host else host
        yield f"http://{shown}:{bound}/"
    finally:
        server.close()
        for queue in list(hub.clients):
            hub.drop(queue)
        await runner.cleanup()
