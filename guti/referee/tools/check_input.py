"""The items of ``guti check`` that push an engine's edges: ``go perft`` diffed against
guti's own count (optional, a guti extension), and bad input (illegal and malformed
moves, a bad FEN, unknown commands, garbage, invalid UTF-8) that must be refused while
the position before it is kept."""

from __future__ import annotations

from typing import TYPE_CHECKING

from guti.referee.tools.check_session import (
    INVALID_UTF8,
    QUICK,
    SLOW,
    Body,
    CheckSession,
    Fail,
    Skip,
    short,
)
from guti.referee.tools.perft_diff import PerftCollector, diff_perft
from guti.referee.ugi.go import Go
from guti.referee.ugi.lines import (
    Position,
    position_line,
    setoption_line,
)
from guti.rules import divide

if TYPE_CHECKING:
    from guti.referee.tools.check_cases import GameCases, PositionCase


class InputItems(CheckSession):
    """``go perft`` and bad input, per game."""

    async def check_perft(self, c: GameCases) -> None:
        g = c.game
        eng = self.eng
        assert eng is not None
        supported: list[bool] = []

        async def probe() -> str:
            self.start_search(Position(), Go(perft=1))
            collector = PerftCollector()

            try:
                lines, _ = await self.read_until(collector.answer_ends, QUICK, "")
            except Fail:
                await self._probe("'go perft 1'")
                raise Skip("the engine does not answer go perft (optional)") from None
            if not collector.done:
                await self.ready("after go perft")
                raise Skip(f"the engine does not support go perft (optional): it answered "
                           f"{lines[-1][:80]!r}")
            supported.append(True)
            return "supported"

        await self.item(f"{g}: go perft", probe, extension=True)
        for case, depth in c.perft:
            name = f"{g}: go perft {depth}, {case.label}"
            if not supported:
                if self.gone is None:
                    self.add("SKIP", name, "no go perft")
                continue
            # a supported go perft that miscounts shows a move generator off the rules: FAIL
            await self.item(name, self.perft_body(g, case, depth))

    def perft_body(self, g: str, case: PositionCase, depth: int) -> Body:
        async def body() -> str:
            assert self.eng is not None
            board = case.board(g)
            ours = divide(board, depth) if depth > 0 else []
            self.start_search(case.position(), Go(perft=depth))
            collector = PerftCollector()
            await self.read_until(collector.feed, SLOW, f"a 'nodes N' line after go perft {depth}")
            diff = diff_perft(depth, ours, collector.result)
            if not diff.same or not diff.order_ok:
                report = diff.lines()
                raise Fail(f"{diff.our_total} nodes as guti counts them",
                           "; ".join(line.strip() for line in report[:6]))
            return f"{diff.our_total} nodes, {len(ours)} moves"
        return body

    async def check_bad_input(self, c: GameCases) -> None:
        g = c.game
        eng = self.eng
        assert eng is not None
        bad = c.bad
        keep = bad.keep
        illegal = Position(keep.fen, (*keep.moves, bad.illegal_move))
        malformed = Position(keep.fen, (*keep.moves, bad.malformed_move))
        sent_keep: list[bool] = []

        def rejected(bad_line: str | Position, prefix: str = "info string error") -> Body:
            async def body() -> str:
                if not sent_keep:
                    self.send_position(keep.position())
                    sent_keep.append(True)
                if isinstance(bad_line, Position):
                    self.send_position(bad_line)
                    line = position_line(bad_line)
                else:
                    eng.send(bad_line)
                    line = bad_line
                answers = await self.ready(f"after {line[:60]!r}")
                words = prefix.split()  # blanks around words ignored (protocol.md 5.1)
                said = [a.strip() for a in answers if a.split()[:len(words)] == words]
                if not said:
                    raise Fail(f"'{prefix} ...' before readyok", short(answers))
                return said[0][:100]
            return body

        async def garbage() -> str:
            eng.send("\x01\x7f garbage \u00ff\u00fe " + "x" * 10000)
            eng.send("position")
            eng.send("query")
            eng.send("setoption")
            await self.ready("after garbage lines")
            return "readyok after garbage"

        async def invalid_utf8() -> str:
            assert self.proc is not None
            self.proc.send_raw(INVALID_UTF8)
            await self.ready("after a line of invalid UTF-8")
            return "readyok after invalid byte sequences"

        async def kept() -> str:
            move = (await self.bestmove(None, Go(depth=1), SLOW)).bestmove
            try:
                self.judge_move(keep.board(g), move)
            except Fail as exc:
                kept_line = position_line(keep.position())
                raise Fail(f"the position before the bad lines kept ({kept_line})",
                           f"{exc}".removeprefix("expected ")) from None
            return f"bestmove {move} in the kept position"

        wording = " (guti's wording)"
        await self.item(f"{g}: bad input, illegal move{wording}", rejected(illegal), True)
        await self.item(f"{g}: bad input, malformed move{wording}", rejected(malformed), True)
        await self.item(f"{g}: bad input, bad FEN{wording}", rejected(Position(bad.bad_fen)), True)
        await self.item(f"{g}: bad input, unknown command{wording}",
                        rejected("frobnicate 3", "info string unknown command"), True)
        await self.item(f"{g}: bad input, unknown query{wording}", rejected("query colour"), True)
        if self.hs is not None and self.hs.variant is not None:
            await self.item(f"{g}: bad input, unknown game{wording}",
                            rejected(setoption_line(self.hs.variant.name, "chess")), True)
        await self.item(f"{g}: bad input, garbage still answers isready", garbage)
        await self.item(f"{g}: bad input, invalid UTF-8 still answers isready", invalid_utf8)
        await self.item(f"{g}: bad input, position kept", kept)

