"""The console's terminal side: coloured timestamped output, and the input loops.

Kept apart from :mod:`guti.referee.tools.console_commands` and
:mod:`guti.referee.tools.console_session` (the commands and their state) because this
is the part that knows about terminals: rich for colour, prompt_toolkit for line
editing, history and completion on a tty, a plain line pump when stdin is a pipe
or a file (so scripts can drive the console too).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import stat
import sys
import threading
from collections.abc import Iterable
from datetime import datetime
from typing import Any, Protocol, TextIO

from guti.referee.process.text import visible
from guti.referee.ugi.lines import is_bestmove, is_info, is_refusal, is_response


class Console(Protocol):
    """What the input loops need of the console, and nothing more: its commands and state
    stay in :mod:`guti.referee.tools.console_commands` and
    :mod:`~guti.referee.tools.console_session` (which import this module, never the reverse)."""

    async def command(self, line: str) -> bool: ...

    def say(self, text: str, style: str = "default") -> None: ...

    def completions(self, text: str) -> tuple[str, list[str]]: ...

    async def idle(self, timeout: float) -> None: ...

    def prompt(self) -> str:
        """The prompt for the next line (``your move> `` when it is the human's turn)."""
        ...

    def stop_engine(self, search_only: bool = False) -> None:
        """Send ``stop`` to a running engine (``search_only``: only while a search runs)."""
        ...

#: How long a script's next line waits for a pending bestmove.
SCRIPT_WAIT = 60.0


def received_style(line: str) -> str:
    """The colour of an engine line, by kind."""
    if is_bestmove(line):
        return "bold green"
    if is_refusal(line):
        return "bold red"
    if is_info(line):
        return "cyan"
    if is_response(line):
        return "magenta"
    if line.split()[:1] in (["id"], ["option"], ["ugiok"], ["readyok"]):  # blanks ignored
        return "yellow"
    return "default"


class Screen:
    """Where everything is printed: rich for colour, one line at a time, never wrapped."""

    def __init__(self, stream: TextIO, colour: bool) -> None:
        from rich.console import Console as RichConsole

        self.rich = RichConsole(
            file=stream, force_terminal=colour, no_color=not colour, highlight=False,
            soft_wrap=True, emoji=False, markup=False, color_system="standard" if colour else None,
        )
        self.log: TextIO | None = None

    def say(self, text: str, style: str = "default") -> None:
        for line in text.splitlines() or [""]:
            self.rich.print(visible(line), style=style)

    def traffic(self, when: float, direction: str, line: str) -> None:
        stamp = datetime.fromtimestamp(when).strftime("%H:%M:%S.%f")[:-3]
        if direction == "<":
            style = received_style(line)
        elif direction == ">":
            style = "blue"
        else:
            style = "dim"
        shown = visible(line)
        self.rich.print(f"{stamp} {direction} {shown}", style=style)
        if self.log is not None:
            try:
                self.log.write(f"{stamp} {direction} {shown}\n")
                self.log.flush()
            except (OSError, ValueError) as exc:  # a full disk: said once, the log closed
                log, self.log = self.log, None
                with contextlib.suppress(OSError, ValueError):
                    log.close()
                why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
                self.say(f"error: the log {log.name} cannot be written ({why}); it is "
                         "closed", "bold red")


async def run_command(console: Console, line: str) -> bool:
    """One command as a task that Ctrl-C (SIGINT, outside the prompt) cancels: the
    console goes back to its prompt and the engine gets ``stop``."""
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(console.command(line))
    try:
        loop.add_signal_handler(signal.SIGINT, task.cancel)
    except (NotImplementedError, RuntimeError):
        pass
    try:
        return await task
    except asyncio.CancelledError:
        if not task.cancelled():
            raise
        console.say("interrupted")
        console.stop_engine()
        return True
    finally:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.remove_signal_handler(signal.SIGINT)


def history_path() -> str:
    return os.environ.get("GUTI_HISTORY") or os.path.expanduser("~/.guti_history")


def usable_history(path: str) -> str | None:
    """Why ``path`` cannot be the history file (a directory, a device such as
    ``/dev/full`` or ``/dev/zero``, which prompt_toolkit would read for ever, a file that
    cannot be opened for appending, or made where it is missing), or None when it can."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return "not a regular file"
    except FileNotFoundError:
        pass  # made now, as prompt_toolkit would at the first line typed
    except OSError as exc:
        return exc.strerror or str(exc)
    try:
        with open(path, "ab"):
            return None
    except OSError as exc:
        return exc.strerror or str(exc)


def _completer(console: Console) -> Any:
    from prompt_toolkit.completion import Completer, Completion

    class MovesAndCommands(Completer):
        def get_completions(self, document: Any, complete_event: Any) -> Iterable[Completion]:
            current, candidates = console.completions(document.text_before_cursor)
            for cand in candidates:
                if cand.startswith(current):  # a space after, ready for the next word
                    yield Completion(cand + " ", start_position=-len(current), display=cand)

    return MovesAndCommands()


async def run_tty(console: Console) -> None:
    """The interactive loop on a terminal: prompt_toolkit with history and completion."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import FileHistory

    path = history_path()
    why = usable_history(path)
    history = None
    if why is None:
        with contextlib.suppress(OSError):
            history = FileHistory(path)
    else:
        console.say(f"error: history file {visible(path)}: {why}; no history kept", "bold red")
    session: PromptSession[str] = PromptSession(
        history=history, completer=_completer(console), complete_while_typing=False
    )
    while True:
        try:
            line = await session.prompt_async(console.prompt)
        except KeyboardInterrupt:
            console.stop_engine(search_only=True)
            continue
        except EOFError:
            return
        if not await run_command(console, line):
            return


#: The longest line a script's input is read in (bytes); a longer one is dropped whole.
PIPE_LINE_MOST = 1 << 20
#: What the input thread hands over instead of a line longer than :data:`PIPE_LINE_MOST`.
TOO_LONG = object()


async def run_pipe(console: Console) -> None:
    """The loop when stdin is not a terminal: one line at a time, EOF ends the console."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[str | object | None] = asyncio.Queue()  # lines, TOO_LONG, None

    def put(raw: bytes | object | None) -> None:
        # bytes decoded here, whatever the locale's encoding: a line that is not UTF-8
        # comes in as lone surrogates, which the console refuses in one line
        line = raw.decode("utf-8", "surrogateescape") if isinstance(raw, bytes) else raw
        with contextlib.suppress(RuntimeError):  # the loop closed: the console ended
            loop.call_soon_threadsafe(queue.put_nowait, line)

    def pump() -> None:
        """A daemon thread, so a blocked read never holds up the exit; it reads the raw
        descriptor, never ``sys.stdin``'s buffered reader, whose lock it would hold
        blocked while the interpreter ends (a fatal error of the runtime)."""
        rest = b""
        dropping = False  # within a line too long to take: read on to its end
        try:
            while data := os.read(sys.stdin.fileno(), 1 << 16):
                *lines, rest = (rest + data).split(b"\n")
                if lines and dropping:
                    lines, dropping = lines[1:], False  # the end of the dropped line
                for raw in lines:
                    if len(raw) > PIPE_LINE_MOST:
                        put(TOO_LONG)
                    else:
                        put(raw + b"\n")
                if len(rest) > PIPE_LINE_MOST:  # no line end in sight: dropped whole
                    if not dropping:
                        put(TOO_LONG)
                    rest, dropping = b"", True
        except OSError:
            pass  # as the end of input
        finally:
            if rest and not dropping:
                put(rest)
            put(None)

    threading.Thread(target=pump, daemon=True).start()
    while True:
        line = await queue.get()
        if line is TOO_LONG:
            console.say(f"error: a line longer than {PIPE_LINE_MOST >> 20} MiB: dropped",
                        "bold red")
            continue
        assert line is None or isinstance(line, str)
        if line is None or line.strip() not in ("/stop", "stop", "quit", "/quit"):
            # a script's next line, or its end, waits for the bestmove (then judged)
            await console.idle(SCRIPT_WAIT)
        if line is None or not await console.command(line):
            return
