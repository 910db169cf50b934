"""A running ``guti tune`` on the console: a line per applied iteration with the values
(unless ``-quiet``) and, on a terminal, a progress bar of the iterations showing them.

Lines are printed plain (:func:`~guti.referee.cli.progress.say_plain`): never wrapped,
control characters escaped, so option names stay literal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from guti.referee.cli.progress import say_plain
from guti.referee.process.text import visible

if TYPE_CHECKING:
    from rich.console import Console

    from guti.referee.tournament.tuning.run import IterationDone
    from guti.referee.tournament.tuning.settings import TuneSettings


def values_text(settings: TuneSettings, theta: tuple[float, ...]) -> str:
    """``NAME=VALUE`` of every parameter: two decimals, or three significant digits for a
    value under 0.01 (a small parameter is not shown as 0.00)."""
    return " ".join(f"{p.name}={_shown(t)}" for p, t in zip(settings.params, theta, strict=True))


def _shown(value: float) -> str:
    return f"{value:.2f}" if value == 0 or abs(value) >= 0.01 else f"{value:.3g}"


class TuneDisplay:
    """The listener of a tuning run that prints it on ``console``."""

    def __init__(self, console: Console, settings: TuneSettings) -> None:
        self.console = console
        self.settings = settings
        self.progress: Progress | None = None
        self.task: TaskID | None = None

    def say(self, text: str) -> None:
        say_plain(self.console, text)

    def start(self) -> None:
        """The progress bar, on a terminal only."""
        if not self.console.is_terminal:
            return
        self.progress = Progress(
            TextColumn("[bold]iterations"), BarColumn(), MofNCompleteColumn(),
            TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn(),
            TextColumn("{task.fields[values]}", markup=False),
            console=self.console, transient=True,
        )
        self.task = self.progress.add_task("iterations", total=self.settings.iterations,
                                           completed=0, values="")
        self.progress.start()

    def iteration(self, done: IterationDone) -> None:
        s = self.settings
        text = values_text(s, done.theta)
        if not s.quiet:
            self.say(f"iteration {done.iteration + 1}/{s.iterations} ({done.finished}/"
                     f"{done.total} games): {text}")
        if self.progress is not None and self.task is not None:
            self.progress.update(self.task, completed=done.iteration + 1, values=visible(text))

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None
