"""``guti console``: talk to one engine by hand, with guti's rules watching.

``guti console [--game G] -- ENGINE_CMD [ARGS...]`` starts the engine, shakes
hands, shows its id and options, and opens a prompt. A line that does not start
with ``/`` goes to the engine as it is, so the raw protocol is always at hand;
``/``-commands (``/help`` lists them) keep a board of their own, check moves and
``bestmove`` answers with the rules core, diff ``go perft`` against guti's perft,
play a game against the engine and run the conformance check.

Every line sent and received is printed with a timestamp and its direction
(``>`` to the engine, ``<`` from it, ``!`` its stderr), received lines coloured
by kind. Printing happens as lines arrive (a traffic hook of EngineProcess) and
a reader task consumes them, so engine output shows while the prompt waits.

On a terminal the prompt is prompt_toolkit's (line editing, history kept in
``$GUTI_HISTORY`` or ``~/.guti_history``, tab completion of commands and legal
moves); otherwise lines are read from stdin as they come, which is how scripts
drive it. The terminal side (printing, prompt, input loops) is in
:mod:`guti.referee.tools.console_io`, the session's state in
:mod:`guti.referee.tools.console_session`, its commands in
:mod:`guti.referee.tools.console_commands`; this module starts and ends a session, and
:mod:`guti.referee.cli.console` reads the command line.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Awaitable, Callable

from guti.referee.tools.console_commands import ConsoleCommands
from guti.referee.tools.console_io import Screen, run_pipe, run_tty


async def run_console(argv: list[str], game: str | None, tty: bool) -> int:
    """A console session with the engine ``argv`` until ``/quit`` or the end of input: 0,
    or 1 when the engine plays no game guti knows (said on the screen);
    :class:`~guti.referee.tools.console_session.ConsoleStartError` when it could not be
    started. ``tty``: read lines with
    prompt_toolkit (history, completion), else one at a time from stdin."""
    if tty:
        from prompt_toolkit.patch_stdout import patch_stdout

        with patch_stdout(raw=True):
            return await _session(argv, game, Screen(sys.stdout, colour=True), run_tty)
    colour = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    return await _session(argv, game, Screen(sys.stdout, colour=colour), run_pipe)


async def _session(argv: list[str], game: str | None, screen: Screen,
                   loop_fn: Callable[[ConsoleCommands], Awaitable[None]]) -> int:
    """Start the engine, run ``loop_fn`` over the input, and always end the engine."""
    console = ConsoleCommands(argv, screen)
    try:
        if not await console.start(game):
            return 1
        await loop_fn(console)
        return 0
    finally:
        try:
            await console.stop()
        except BaseException:
            console.eng.kill_now()
            raise
        if screen.log is not None:
            screen.log.close()
