"""The UGI front end of the reference engine: commands in, answers out (protocol.md).

State: the selected game, the current :class:`~guti.rules.Board`, the option values.
The command loop (:func:`run`) carries out one line at a time on the main thread, the
lines read ahead by a thread of their own (:mod:`guti.engine.ugi_input`); every long job
(a search, ``go perft``, ``bench``) runs on one worker thread with its own stop flag, so
``stop`` and ``quit`` are answered at once while it runs, and ``isready`` too while a
search runs (``go perft`` and ``bench`` write their lines first, as protocol.md asks,
unless a ``stop``, ``quit`` or the end of input behind the ``isready`` ends them; ``stop``
waits for the job's last line, so a ``bestmove`` always comes before the answer to the
next command). Output lines from both threads go through one lock and are flushed one by
one.

This module knows nothing of how a move is found: it drives the search through
``Searcher.search(board, limits, on_info, stop) -> SearchResult`` and formats what comes
back. The search module is imported on first use, which keeps start-up (the ``ugi``
answer) fast.

Bad input never changes anything half-way: a rejected ``position``, ``setoption`` or ``go``
leaves the engine exactly as it was and gets one ``info string error ...`` line.
"""

from __future__ import annotations

import io
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, BinaryIO, TextIO

from guti.rules import Board, PerftStopped, Result, RulesError, divide

if TYPE_CHECKING:  # imported on first use at run time: start-up stays fast
    from guti.engine.search import Iteration, Searcher, SearchLimits

from .ugi_go import CommandError, GoPerft, read_go, shown
from .ugi_input import InputLine, InputLines, words
from .ugi_options import EVAL_OPTIONS, OPTIONS, OptionError, parse_setoption, ugi_answer

#: The answers to ``query result`` (protocol.md 5.2), by result.
RESULT_WORDS = {Result.WHITE_WINS: "p1win", Result.BLACK_WINS: "p2win", Result.DRAW: "draw",
                Result.UNFINISHED: "none"}

class Output:
    """Line writer shared by the command loop and the worker: one lock, flush per line."""

    def __init__(self, stream: TextIO):
        self._stream = stream
        self._lock = threading.Lock()
        self.broken = False

    def line(self, text: str) -> None:
        with self._lock:
            if self.broken:
                return
            try:
                self._stream.write(text + "\n")
                self._stream.flush()
            except (OSError, ValueError):
                self.broken = True  # the GUI went away; keep quiet, the loop ends at EOF


class EngineSession:
    """One engine session: handles one command line at a time (see :meth:`handle`)."""

    def __init__(self, out: Output):
        self.out = out
        self.values: dict[str, int | str] = {o.name: o.default for o in OPTIONS}
        # Evaluation weights given by setoption: only these override the game's defaults
        # (a game may default to other weights than the options' declared defaults).
        self.weights_set: dict[str, int] = {}
        self.board = Board(str(self.values["UGI_Variant"]))
        self._searcher: Searcher | None = None
        #: Whether a ``stop``, a ``quit`` or the end of input waits behind the command
        #: being carried out (see :mod:`guti.engine.ugi_input`).
        self.interrupt_waiting: Callable[[], bool] = lambda: False
        self._worker: threading.Thread | None = None
        self._job_is_search = False  # the running job is a search (isready must not wait)
        self._stop = threading.Event()
        # last good position command: (game, base, moves, board) to extend cheaply
        self._last_position: tuple[str, str, list[str], Board] | None = None
        self._commands: dict[str, Callable[[list[str], str, float], bool | None]] = {
            "ugi": self.cmd_ugi,
            "isready": self.cmd_isready,
            "setoption": self.cmd_setoption,
            "uginewgame": self.cmd_uginewgame,
            "position": self.cmd_position,
            "go": self.cmd_go,
            "stop": self.cmd_stop,
            "query": self.cmd_query,
            "d": self.cmd_d,
            "bench": self.cmd_bench,
            "quit": self.cmd_quit,
        }

    # --- plumbing -------------------------------------------------------------------------

    @property
    def game(self) -> str:
        return str(self.values["UGI_Variant"])

    def searcher(self) -> Searcher:
        """The searcher, created (and its table allocated) on first need."""
        if self._searcher is None:
            from guti.engine.search import Searcher

            self._searcher = Searcher(
                hash_mb=int(self.values["Hash"]),
                seed=int(self.values["Seed"]),
                level=int(self.values["Level"]),
                overhead_ms=int(self.values["Move Overhead"]),
            )
            for name, weight in self.weights_set.items():
                self._searcher.set_weight(name, weight)
        return self._searcher

    def busy(self) -> bool:
        return self._worker is not None and self._worker.is_alive()

    def finish_job(self, timeout: float | None = None) -> None:
        """Stop the running job (a search sends its bestmove) and wait for it."""
        if self._worker is not None:
            self._stop.set()
            self._worker.join(timeout)
            if not self._worker.is_alive():
                self._worker = None

    def _start_job(self, target: Callable[[threading.Event], None], search: bool = False) -> None:
        self.finish_job()
        self._job_is_search = search
        self._stop = threading.Event()
        stop = self._stop

        def guarded() -> None:
            try:
                target(stop)
            except Exception as exc:  # never let a bug kill the session silently
                self.out.line(f"info string error internal: {shown(repr(exc))}")

        self._worker = threading.Thread(target=guarded, name="ugi-job", daemon=True)
        self._worker.start()

    def carry_out(self, line: InputLine) -> bool:
        """One line of input (see :meth:`handle`); False at the end of input too."""
        if line.text is None:
            return False
        if line.error is not None:
            self.out.line(f"info string error {line.error}")
            return True
        return self.handle(line.text, line.received)

    def handle(self, line: str, received: float | None = None) -> bool:
        """Carry out one command line; False when the session should end (``quit``)."""
        received = time.perf_counter() if received is None else received
        tokens = words(line)
        if not tokens:
            return True
        command = self._commands.get(tokens[0])
        if command is None:
            self.out.line(f"info string unknown command {shown(line.strip())}")
            return True
        try:
            return command(tokens, line, received) is not False
        except (CommandError, OptionError, RulesError) as exc:
            self.out.line(f"info string error {shown(str(exc), 400)}")
        except Exception as exc:  # a bug must not end the session
            self.out.line(f"info string error internal: {shown(repr(exc))}")
        return True

    def shutdown(self) -> None:
        self.finish_job(timeout=1.0)

    # --- commands -------------------------------------------------------------------------

    def cmd_ugi(self, tokens: list[str], line: str, received: float) -> None:
        for text in ugi_answer():
            self.out.line(text)

    def cmd_isready(self, tokens: list[str], line: str, received: float) -> None:
        """``readyok`` after everything sent before: a running search answers at once (it goes
        on), but a ``go perft`` or ``bench`` is not a search, so its lines come first; a
        ``stop``, ``quit`` or the end of input behind this ``isready`` ends it first."""
        worker = self._worker
        if worker is not None and worker.is_alive() and not self._job_is_search:
            while worker.is_alive():
                worker.join(0.05)
                if self.interrupt_waiting():
                    self._stop.set()
        if not self.busy():
            self.searcher()
        self.out.line("readyok")

    def cmd_setoption(self, tokens: list[str], line: str, received: float) -> None:
        option, value = parse_setoption(tokens[1:])
        self.finish_job()
        self.values[option.name] = value
        if option.name in EVAL_OPTIONS:
            self.weights_set[option.name] = int(value)
        if option.name == "UGI_Variant":
            self.board = Board(str(value))
            self._last_position = None
        elif self._searcher is not None:
            if option.name == "Hash":
                self._searcher.set_hash(int(value))
            elif option.name == "Seed":
                self._searcher.seed = int(value)
            elif option.name == "Level":
                self._searcher.level = int(value)
            elif option.name == "Move Overhead":
                self._searcher.overhead_ms = int(value)
            elif option.name in EVAL_OPTIONS:
                self._searcher.set_weight(option.name, int(value))

    def cmd_uginewgame(self, tokens: list[str], line: str, received: float) -> None:
        self.finish_job()
        self.board = Board(self.game)
        self._last_position = None
        self.searcher().new_game()

    def cmd_position(self, tokens: list[str], line: str, received: float) -> None:
        if len(tokens) < 2 or tokens[1] not in ("startpos", "fen"):
            got = f", got {shown(tokens[1], 40)!r}" if len(tokens) > 1 else ""
            raise CommandError(f"position: expected 'startpos' or 'fen <FEN>'{got}")
        try:
            at = tokens.index("moves")
        except ValueError:
            at = len(tokens)
        if tokens[1] == "startpos":
            if at != 2:
                raise CommandError(
                    f"position: expected 'moves' after startpos, got {shown(tokens[2], 40)!r}")
            base = "startpos"
        else:
            if at == 2:
                raise CommandError("position fen: missing FEN")
            base = " ".join(tokens[2:at])
        moves = tokens[at + 1:]
        board = self._build_board(base, moves)
        self.finish_job()
        self.board = board
        self._last_position = (self.game, base, moves, board)

    def _build_board(self, base: str, moves: list[str]) -> Board:
        """The board of ``base`` + ``moves``, reusing the last one when it is a prefix."""
        last = self._last_position
        done = 0
        if (last is not None and last[0] == self.game and last[1] == base
                and len(last[2]) <= len(moves) and moves[: len(last[2])] == last[2]):
            board = last[3].copy()
            done = len(last[2])
        elif base == "startpos":
            board = Board(self.game)
        else:
            try:
                board = Board.from_fen(self.game, base)
            except RulesError as exc:
                raise CommandError(f"position: {exc}") from None
        for number in range(done, len(moves)):
            try:
                board.push_str(moves[number])
            except RulesError as exc:
                raise CommandError(f"position: move {number + 1}: {exc}") from None
        return board

    def cmd_go(self, tokens: list[str], line: str, received: float) -> None:
        request = read_go(tokens, self.board.turn, received)
        if isinstance(request, GoPerft):
            self._start_perft(request.depth)
        else:
            self._start_search(request)

    def _start_search(self, limits: SearchLimits) -> None:
        board = self.board.copy()
        searcher = self.searcher()
        out = self.out

        def on_info(it: Iteration) -> None:
            from guti.engine.search import describe_score

            score = describe_score(it.score)
            out.line(f"info depth {it.depth} seldepth {it.seldepth} score {score.kind} "
                     f"{score.value} nodes {it.nodes} nps {it.nps} time {it.time_ms} "
                     f"pv {' '.join(it.pv)}".rstrip())

        def job(stop: threading.Event) -> None:
            try:
                result = searcher.search(board, limits, on_info, stop)
                move = result.bestmove
            except Exception as exc:
                out.line(f"info string error internal search failure: {shown(repr(exc))}")
                legal = board.legal_moves
                move = str(legal[0]) if legal else None
            out.line(f"bestmove {move or 'none'}")

        self._start_job(job, search=True)

    def _start_perft(self, depth: int) -> None:
        board = self.board.copy()
        out = self.out

        def job(stop: threading.Event) -> None:
            try:
                if depth == 0:
                    out.line("nodes 1")
                    return
                total = 0
                lines = []
                for text, count in divide(board, depth, stop.is_set):
                    lines.append(f"{text}: {count}")
                    total += count
            except PerftStopped:
                out.line("info string perft stopped")
                return
            for text in lines:
                out.line(text)
            out.line(f"nodes {total}")

        self._start_job(job)

    def cmd_stop(self, tokens: list[str], line: str, received: float) -> None:
        """End the running search or ``go perft`` and wait for it, so its ``bestmove`` (or
        its last line) is written before the answer to any later command."""
        if self.busy():
            self.finish_job()

    def cmd_query(self, tokens: list[str], line: str, received: float) -> None:
        what = tokens[1] if len(tokens) > 1 else ""
        if len(tokens) > 2 or what not in ("gameover", "p1turn", "result"):
            got = shown(" ".join(tokens[1:]), 40)
            raise CommandError(f"query: expected gameover, p1turn or result, got {got!r}")
        board = self.board
        if what == "gameover":
            answer = "true" if board.is_game_over() else "false"
        elif what == "p1turn":
            answer = "true" if board.turn == "w" else "false"
        else:
            outcome = board.outcome()
            answer = RESULT_WORDS[Result.UNFINISHED if outcome is None else outcome.result]
        self.out.line(f"response {answer}")

    def cmd_d(self, tokens: list[str], line: str, received: float) -> None:
        board = self.board
        for row in board.board_string().splitlines():
            self.out.line(f"info string {row}".rstrip())
        self.out.line(f"fen {board.fen()}")
        self.out.line(" ".join(["legal"] + [str(m) for m in board.legal_moves]))

    def cmd_bench(self, tokens: list[str], line: str, received: float) -> None:
        from guti.engine.bench import run_bench

        out = self.out

        def job(stop: threading.Event) -> None:
            run_bench(lambda text: out.line(f"info string {text}"), stop=stop)

        self._start_job(job)

    def cmd_quit(self, tokens: list[str], line: str, received: float) -> bool:
        return False


def run(stdin: BinaryIO, stdout: TextIO, early: Sequence[InputLine] = ()) -> int:
    """The command loop: one line at a time until ``quit`` or end of input; returns 0.

    ``early`` holds lines (with the time they were read) that arrived before this module
    was loaded; they are carried out first, in order.
    """
    engine = EngineSession(Output(stdout))
    try:
        for line in early:
            if not engine.carry_out(line):
                return 0
        lines = InputLines(stdin)
        engine.interrupt_waiting = lines.interrupt_waiting
        while engine.carry_out(lines.next()):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        engine.shutdown()
    return 0


def main_loop(early: Sequence[InputLine] = ()) -> int:
    """Run on the process's own stdin/stdout, written in UTF-8 whatever the locale says
    (protocol.md: the lines are UTF-8; an ASCII locale could not write an echoed
    ``\ufffd``, and the engine would have fallen silent)."""
    sys.stdout.flush()
    out = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", errors="replace",
                           newline="\n")
    return run(sys.stdin.buffer, out, early)
