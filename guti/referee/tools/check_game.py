"""The items of ``guti check`` for one game: selecting it, ``uginewgame``, every way to
limit a search and to stop it, the forms of ``position``, a finished game, ``query``
and ``d``. Every expected answer is computed by the rules core when the item runs."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from guti.referee.game.judge import Fault
from guti.referee.tools.check_cases import GameCases, PositionCase
from guti.referee.tools.check_session import (
    CLOCK_MS,
    INFINITE_WAIT,
    MOVETIME,
    MOVETIME_MARGIN,
    QUICK,
    SLOW,
    STOP_LIMIT,
    Body,
    CheckSession,
    Fail,
    Skip,
    short,
)
from guti.referee.ugi.go import Go
from guti.referee.ugi.lines import (
    is_bestmove,
    is_error_report,
    is_readyok,
    is_refusal,
    is_response,
    position_line,
    query_line,
    result_word,
    setoption_line,
)

if TYPE_CHECKING:
    from guti.rules import Board


class GameItems(CheckSession):
    """What one game's section of the report checks (perft and bad input aside)."""

    async def check_game(self, c: GameCases) -> None:
        """The game's own items, up to ``d``; its ``go perft`` and bad input follow
        (:mod:`guti.referee.tools.check_input`)."""
        g = self.game = c.game
        eng = self.eng
        assert eng is not None

        async def variant() -> str:
            if self.hs is None or self.hs.variant is None:
                return f"no UGI_Variant option: the engine plays {g}"
            eng.select_game(g)
            errors = [line for line in await self.ready(f"after selecting {g}") if is_error_report(line)]
            if errors:
                raise Fail("the game selected without complaint", short(errors))
            return setoption_line(self.hs.variant.name, g)

        async def newgame() -> str:
            eng.announce_new_game()
            start = time.monotonic()
            await self.ready("after uginewgame", timeout=5.0)
            return f"readyok in {(time.monotonic() - start) * 1000:.0f} ms"

        await self.item(f"{g}: UGI_Variant", variant)
        await self.item(f"{g}: uginewgame", newgame)
        await self.check_search(c)

        for case in (PositionCase("startpos", None), c.startpos_moves, c.fen_moves, c.fen_short,
                     c.black_to_move):
            await self.item(f"{g}: position {case.label}", self.position_body(g, case))

        async def finished() -> str:
            fin = c.finished
            reply = await self.bestmove(fin.position(), Go(infinite=True), QUICK)
            self.judge_move(fin.board(g), reply.bestmove)
            return f"bestmove none in {reply.elapsed_ms:.0f} ms"

        await self.item(f"{g}: go on a finished game ({c.finished.reason})", finished)
        for case in c.queries:
            await self.item(f"{g}: query, {case.label}", self.query_body(g, case))
        await self.item(f"{g}: d (guti extension)", self.show_board_body(), extension=True)

    def show_board_body(self) -> Body:
        """``d`` (protocol.md 5.2, a guti extension): some picture of the board before
        ``readyok``, no error."""
        async def body() -> str:
            assert self.eng is not None
            self.eng.send("d")
            self.free_text = True
            try:
                lines = [line for line in await self.ready("after d") if line.strip()]
            finally:
                self.free_text = False
            if not lines or any(map(is_refusal, lines)):
                raise Fail("a picture of the board before readyok", short(lines))
            return f"{len(lines)} lines"
        return body

    async def check_search(self, c: GameCases) -> None:
        """The ``go`` items: each way to limit a search, ``stop`` during and without one."""
        g = c.game
        eng = self.eng
        assert eng is not None
        search = c.startpos_moves  # a mid-game position with several moves
        board = search.board(g)

        async def go_movetime() -> str:
            limit = MOVETIME + MOVETIME_MARGIN
            reply = await self.bestmove(search.position(), Go(movetime=MOVETIME),
                                        3.0 + MOVETIME / 1000)
            move, ms = reply.bestmove, reply.elapsed_ms
            if self.judge_move(board, move, ms, limit).fault is Fault.TIME:
                raise Fail(f"bestmove within {MOVETIME} ms (+{MOVETIME_MARGIN} ms margin)",
                           f"bestmove {move} after {ms:.0f} ms")
            return f"bestmove {move} in {ms:.0f} ms"

        async def go_clock() -> str:
            clock = Go(p1time=CLOCK_MS, p1inc=0, p2time=CLOCK_MS, p2inc=0)
            reply = await self.bestmove(search.position(), clock, 3.0 + CLOCK_MS / 1000)
            move, ms = reply.bestmove, reply.elapsed_ms
            if self.judge_move(board, move, ms, CLOCK_MS).fault is Fault.TIME:
                raise Fail(f"bestmove before the side's {CLOCK_MS} ms are gone",
                           f"bestmove {move} after {ms:.0f} ms")
            return f"bestmove {move} in {ms:.0f} ms of {CLOCK_MS}"

        def go_limited(go: Go) -> Body:
            async def body() -> str:
                reply = await self.bestmove(search.position(), go, SLOW)
                self.judge_move(board, reply.bestmove)
                return f"bestmove {reply.bestmove} in {reply.elapsed_ms:.0f} ms"
            return body

        async def go_infinite() -> str:
            self.start_search(search.position(), Go(infinite=True))
            try:
                lines, _ = await self.read_until(
                    is_bestmove, INFINITE_WAIT, "")
            except Fail:
                pass  # nothing before stop: as it should be
            else:
                raise Fail("no bestmove before stop", f"{lines[-1]!r} during go infinite")
            early = await self.ready("at once during go infinite", timeout=1.0)
            found = [line for line in early if is_bestmove(line)]
            if found:
                raise Fail("no bestmove before stop", f"{found[0]!r} during go infinite")
            self.look_at_usage()  # mid-search: every thread it searches with is running
            eng.stop()
            stopped_at = time.monotonic()
            lines, _ = await self.answer(
                eng.read_until(is_bestmove, 3.0), 3.0, "bestmove after stop")
            took = time.monotonic() - stopped_at
            words = lines[-1].split()
            move = words[1] if len(words) > 1 else None
            self.judge_move(board, move)
            if took > STOP_LIMIT:
                raise Fail(f"bestmove within {STOP_LIMIT:g} s of stop",
                           f"it after {took:.2f} s")
            return f"readyok during the search; bestmove {move} {took * 1000:.0f} ms after stop"

        async def stop_idle() -> str:
            eng.drop_pending()  # an earlier search's lines are not an answer to this stop
            eng.stop()
            extra = [line for line in await self.ready("after stop") if line.strip()]
            moves = [line for line in extra if line.split()[:1] == ["bestmove"]]
            if moves:
                raise Fail("no answer to stop with no search running", short(moves))
            return "ignored"

        await self.item(f"{g}: go movetime", go_movetime)
        await self.item(f"{g}: go with a clock", go_clock)
        await self.item(f"{g}: go with movestogo", self.movestogo_body(search, board))
        await self.item(f"{g}: go depth", go_limited(Go(depth=2)))
        await self.item(f"{g}: go nodes", go_limited(Go(nodes=500)))
        await self.item(f"{g}: go infinite, isready, stop", go_infinite)
        await self.item(f"{g}: stop with no search", stop_idle)

    def movestogo_body(self, search: PositionCase, board: Board) -> Body:
        """``movestogo`` (protocol.md 5.2): guti sends it whenever a period is in force,
        so every engine must accept it (it may ignore the value)."""
        async def body() -> str:
            clock = Go(p1time=CLOCK_MS * 5, p1inc=0, p2time=CLOCK_MS * 5, p2inc=0, movestogo=5)
            reply = await self.bestmove(search.position(), clock, 3.0 + CLOCK_MS * 5 / 1000)
            errors = [line for line in reply.infos if is_error_report(line)]
            if errors:
                raise Fail(f"'go {clock.arguments()}' accepted", short(errors))
            self.judge_move(board, reply.bestmove)
            return f"bestmove {reply.bestmove} in {reply.elapsed_ms:.0f} ms"
        return body

    def position_body(self, g: str, case: PositionCase) -> Body:
        async def body() -> str:
            assert self.eng is not None
            self.send_position(case.position())
            errors = [line for line in await self.ready("after position") if is_error_report(line)]
            if errors:
                raise Fail(f"'{position_line(case.position())}' accepted", short(errors))
            reply = await self.bestmove(None, Go(depth=1), SLOW)
            self.judge_move(case.board(g), reply.bestmove)
            return f"bestmove {reply.bestmove}"
        return body

    def query_body(self, g: str, case: PositionCase) -> Body:
        async def body() -> str:
            assert self.eng is not None
            if self.unanswered is not None:
                raise Skip(f"the engine did not answer {self.unanswered} in an earlier item")
            board = case.board(g)
            want = {
                "gameover": "true" if board.is_game_over() else "false",
                "p1turn": "true" if board.turn == "w" else "false",
                "result": result_word(board),
            }
            self.send_position(case.position())
            got: dict[str, str] = {}
            for question in want:
                # isready behind the query: readyok means the engine has processed the
                # query (protocol.md, isready), so one that ignores it fails at once
                # instead of after a wait.
                self.eng.send(query_line(question))
                self.eng.ask_ready()
                self.unanswered = query_line(question)
                lines, _ = await self.read_until(
                    lambda line: is_response(line) or is_refusal(line) or is_readyok(line),
                    QUICK, f"'response ...' to query {question}")
                words = lines[-1].split()
                if is_readyok(lines[-1]):
                    raise Fail(f"'response ...' to query {question} before the readyok to "
                               "the isready sent after it", "readyok before any response")
                if words[0] == "response":
                    self.unanswered = None  # answered, whatever comes of the readyok
                await self.read_until(is_readyok, QUICK, f"readyok after query {question}")
                if words[0] != "response":
                    raise Fail(f"'response {want[question]}' to query {question}",
                               repr(lines[-1]))
                got[question] = words[1] if len(words) > 1 else ""
            if got != want:
                fmt = ", ".join
                raise Fail(fmt(f"{q} {a}" for q, a in want.items()),
                           fmt(f"{q} {a}" for q, a in got.items()))
            return ", ".join(f"{q} {a}" for q, a in got.items())
        return body

