"""The state of one ``guti console`` session: the engine, guti's own board, the search or
game against the engine that is pending, and the engine's lines as they arrive.

Printing happens as lines arrive (a traffic hook of EngineProcess) and a reader task
consumes them, so engine output shows while the prompt waits. A ``bestmove`` is judged
by the rules core as it comes; in a game against the engine, its move is played and the
human's turn announced. The ``/``-commands are in :mod:`guti.referee.tools.console_commands`.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from guti.referee.game.engine_config import EngineConfig
from guti.referee.game.judge import Fault, judge_reply
from guti.referee.process.engine_process import EngineProcess
from guti.referee.process.errors import (
    EngineDisconnected,
    EngineError,
    EngineProtocolError,
    EngineTimeout,
)
from guti.referee.tools.check_session import said
from guti.referee.ugi.client import UgiEngine
from guti.referee.ugi.lines import Position, is_bestmove, is_readyok
from guti.referee.ugi.options import UNDECLARED_GAME, Handshake
from guti.rules import Board

if TYPE_CHECKING:
    from guti.referee.tools.console_io import Screen
    from guti.referee.ugi.go import Go

HANDSHAKE_TIMEOUT = 10.0
READY_TIMEOUT = 10.0


class ConsoleStartError(Exception):
    """The engine could not be started, or did not finish its ``ugi`` handshake: one line
    saying why, which ``guti console`` prints as every command reports an engine that
    cannot start (``guti check``, ``guti match``: on stderr, exit status 2)."""


@dataclass
class Search:
    """A ``go`` the console sent and is waiting to judge."""

    board: Board
    sent: float
    for_play: bool
    stop_sent: bool = False  # /stop said once: a second gives the search up


@dataclass
class Play:
    """A game of the human against the engine."""

    human: str  # 'w' or 'b'
    go: Go


def describe_end(board: Board, human: str | None = None) -> str | None:
    """``game over: 1-0 (no legal move), White wins`` or None while the game goes on."""
    outcome = board.outcome()
    if outcome is None:
        return None
    if outcome.winner is None:
        who = "a draw"
    else:
        colour = "White" if outcome.winner == "w" else "Black"
        who = f"{colour} wins"
        if human is not None:
            who += ": you win" if outcome.winner == human else ": the engine wins"
    return f"game over: {outcome.result} ({outcome.reason}), {who}"


class ConsoleSession:
    """The state of one console session: the engine, guti's board, and what is pending."""

    def __init__(self, argv: list[str], screen: Screen) -> None:
        self.argv = argv
        self.screen = screen
        config = EngineConfig(name="E", argv=argv)
        self.eng = UgiEngine(EngineProcess(config, traffic=self.on_traffic), config)
        self.hs: Handshake | None = None
        self.game = UNDECLARED_GAME  # until the engine says what it plays
        self.board = Board(self.game)
        self.search: Search | None = None
        self.play: Play | None = None
        self.alive = False
        self.waiter: tuple[Callable[[str], bool], asyncio.Future[str]] | None = None
        self.reader: asyncio.Task[None] | None = None
        self.play_pending = False  # the engine's bestmove was played, its follow-up not yet
        self.owed_bestmoves = 0  # searches given up, whose bestmove may still come

    # -- printing ----------------------------------------------------------------------
    def on_traffic(self, when: float, direction: str, name: str, line: str) -> None:
        self.screen.traffic(when, direction, line)

    def say(self, text: str, style: str = "default") -> None:
        self.screen.say(text, style)

    def error(self, text: str) -> None:
        self.screen.say(f"error: {text}", "bold red")

    def show_board(self, board: Board | None = None) -> None:
        b = board or self.board
        self.say(b.board_string())
        legal = " ".join(str(m) for m in b.legal_moves)
        self.say(f"legal: {legal}" if legal else "legal: (none)")
        end = describe_end(b)
        if end and self.play is None:  # in a game, play_on announces it
            self.say(end, "bold")

    # -- start and stop ----------------------------------------------------------------
    async def start(self, game: str | None) -> bool:
        """Start the engine and shake hands: :class:`ConsoleStartError` if it cannot; False
        (with a message) if it plays no game it can be talked to in."""
        try:
            await self.eng.start()
            self.hs = await self.eng.read_handshake(HANDSHAKE_TIMEOUT)
        except EngineError as exc:
            raise ConsoleStartError(said(exc)) from None
        hs = self.hs
        self.alive = True
        self.say(f"engine: {hs.id_name or '(no id name)'} by {hs.id_author or '(no id author)'};"
                 f" ugiok in {hs.elapsed * 1000:.0f} ms", "bold")
        for opt in hs.options.values():
            extra = f" default {opt.default}" if opt.default is not None else ""
            if opt.min is not None or opt.max is not None:
                extra += f" min {opt.min} max {opt.max}"
            if opt.vars:
                extra += " var " + " var ".join(opt.vars)
            self.say(f"  option {opt.name} ({opt.type}){extra}")
        self.say(f"plays: {', '.join(hs.games())}")
        chosen = game or hs.default_game()
        if chosen is None:
            self.error(f"the engine plays no game guti knows ({', '.join(hs.games())})")
            return False
        if chosen not in hs.games():
            self.error(f"the engine does not play {chosen} (it plays {', '.join(hs.games())})")
            return False
        self.reader = asyncio.create_task(self.read_engine())
        if not await self.select_game(chosen):
            return False
        self.say("type /help for the console's commands; other lines go to the engine as they are")
        return True

    async def stop(self) -> None:
        if self.reader is not None:
            self.reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.reader
        await self.eng.quit(grace=1.0, term_grace=1.0)

    # -- reading the engine --------------------------------------------------------------
    async def read_engine(self) -> None:
        """Consume engine lines forever (they were printed as they came) and dispatch them."""
        while True:
            try:
                line = await self.eng.read_line(3600.0)
            except EngineTimeout:
                continue
            except (EngineDisconnected, EngineProtocolError) as exc:
                self.alive = False
                self.search = None
                self.play = None
                self.error(f"{said(exc)}; /quit to leave")
                if self.waiter is not None and not self.waiter[1].done():
                    self.waiter[1].set_exception(EngineDisconnected(str(exc)))
                if isinstance(exc, EngineProtocolError):
                    self.eng.kill_now()
                return
            self.dispatch(line)

    def dispatch(self, line: str) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter[1].done() and waiter[0](line):
            waiter[1].set_result(line)
            return
        if is_bestmove(line) and self.owed_bestmoves:  # a search given up answers late
            self.owed_bestmoves -= 1
            self.say("(the answer to the search given up: not judged)")
        elif is_bestmove(line) and self.search is not None:
            self.on_bestmove(line)

    async def wait_for(self, done: Callable[[str], bool], timeout: float, what: str) -> bool:
        """Wait for a line (seen by the reader) for which ``done`` is true; False on timeout."""
        fut: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self.waiter = (done, fut)
        try:
            await asyncio.wait_for(fut, timeout)
            return True
        except TimeoutError:
            self.error(f"no {what} within {timeout:g} s")
            return False
        except EngineError:
            return False
        finally:
            self.waiter = None

    async def idle(self, timeout: float) -> None:
        """Wait until no search (nor a game's engine move) is pending, at most ``timeout`` s.
        A search still pending then is given up (the engine is sent ``stop``, and a game
        against it ends), so that the next line does not wait for it again."""
        deadline = time.monotonic() + timeout
        while (self.search is not None or self.play_pending) and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        if self.search is not None:
            self.stop_engine(search_only=True)
            self.give_up_search(f"no bestmove within {timeout:g} s: the search is given up "
                                "(the engine was sent stop)")

    def give_up_search(self, said: str) -> None:
        """Stop waiting for the search under way, saying so (a game against the engine
        ends): its ``bestmove``, if it ever comes, is then not taken for the answer to a
        later ``go``."""
        self.error(said)
        self.search = None
        self.owed_bestmoves += 1
        if self.play is not None:
            self.say("play ends", "bold red")
            self.play = None

    async def ready(self) -> bool:
        self.eng.ask_ready()
        return await self.wait_for(is_readyok, READY_TIMEOUT, "readyok")

    # -- the board -------------------------------------------------------------------------
    def send_position(self) -> None:
        self.eng.send_position(Position.of(self.board))

    async def select_game(self, game: str) -> bool:
        assert self.hs is not None
        if game not in self.hs.games():
            self.error(f"the engine does not play {game} (it plays {', '.join(self.hs.games())})")
            return False
        self.eng.select_game(game)
        self.eng.announce_new_game()
        if not await self.ready():
            return False
        self.game = game
        self.board = Board(game)
        self.send_position()
        self.say(f"game: {game}")
        return True

    def busy(self) -> bool:
        if self.search is not None:
            self.error("a search is running: /stop it first")
            return True
        return False

    def need_engine(self) -> bool:
        if not self.alive:
            self.error("the engine is not running; /quit to leave")
            return False
        return True

    # -- searching and playing -------------------------------------------------------------
    def start_search(self, go: Go, for_play: bool) -> None:
        self.search = Search(self.board.copy(), time.monotonic(), for_play)
        self.eng.start_search(Position.of(self.board), go)
        if not self.board.legal_moves:
            self.say("(the game is over here: the engine should answer bestmove none at once)")

    def on_bestmove(self, line: str) -> None:
        search = self.search
        assert search is not None
        self.search = None
        took = (time.monotonic() - search.sent) * 1000
        words = line.split()
        move = words[1] if len(words) > 1 else None
        legal = [str(m) for m in search.board.legal_moves]
        verdict = judge_reply(search.board, move)
        if verdict.fault is Fault.NO_MOVE:
            self.error(f"bestmove without a move after {took:.0f} ms")
        elif verdict.fault is Fault.NONE_WITH_MOVES:
            self.error(f"bestmove none, but there are legal moves: {' '.join(legal)}")
        elif verdict.fault is not None:
            self.error(f"bestmove {move} is NOT legal here (legal: {' '.join(legal) or 'none'})"
                       f" ({took:.0f} ms)")
        elif verdict.move is None:
            self.say(f"bestmove none is right: the game is over ({took:.0f} ms)", "green")
        else:
            self.say(f"bestmove {move} is legal ({took:.0f} ms)", "green")
        if search.for_play and self.play is not None:
            if verdict.move is None:
                self.say("the engine loses the game by that answer; play ends", "bold red")
                self.play = None
                return
            self.board.push(verdict.move)
            self.send_position()
            self.show_board()
            self.play_pending = True
            asyncio.get_running_loop().create_task(self.play_on())

    async def play_on(self) -> None:
        """Next step of a game against the engine: announce the end, ask, or let it move."""
        self.play_pending = False
        play = self.play
        if play is None:
            return
        end = describe_end(self.board, play.human)
        if end is not None:
            self.say(end, "bold")
            self.play = None
            return
        if self.board.turn == play.human:
            legal = " ".join(str(m) for m in self.board.legal_moves)
            self.say(f"your move; legal: {legal}")
        elif self.need_engine() and self.search is None:
            self.start_search(play.go, for_play=True)

    # -- what the input loops of console_io ask ------------------------------------------------
    def prompt(self) -> str:
        if self.play is not None and self.board.turn == self.play.human:
            return "your move> "
        return f"{self.game} {self.board.turn}> "

    def stop_engine(self, search_only: bool = False) -> None:
        if self.alive and (self.search is not None or not search_only):
            self.eng.stop()
