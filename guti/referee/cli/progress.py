"""A running tournament on the console: a line per stored game, the periodic standings
and, on a terminal, a live progress bar, all rendered from the tournament's events
(:mod:`guti.referee.tournament.events`).

Every line is printed plain: never wrapped, control characters escaped, no rich markup or
highlighting, so engine names stay literal.
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from guti.referee.cli.standings_view import print_standings
from guti.referee.game.latency import latency_lines
from guti.referee.process.text import visible
from guti.referee.tournament.events import (
    GameStored,
    Note,
    PlayEnded,
    PlayStarted,
    ScheduleGrew,
    TournamentEvent,
    Trouble,
)

if TYPE_CHECKING:
    from rich.console import Console

    from guti.referee.tournament.settings import TournamentSettings


def say_plain(console: Console, text: str) -> None:
    """One line, never wrapped, control characters escaped, no rich markup or highlighting
    (engine names stay literal)."""
    console.print(visible(text), highlight=False, markup=False, soft_wrap=True)


def say_trouble(text: str) -> None:
    """A line about trouble (a stop, a cluster worker, a fault): on stderr, escaped."""
    print(visible(text), file=sys.stderr, flush=True)


class TournamentDisplay:
    """The listener of a tournament's events that prints them on ``console``: per-game lines
    (unless ``-quiet``), latency lines (``-show-latency``), the standings every
    ``-ratinginterval`` games, and a progress bar while games are played (on a terminal)."""

    def __init__(self, console: Console, settings: TournamentSettings) -> None:
        self.console = console
        self.settings = settings
        self.progress: Progress | None = None
        self.task: TaskID | None = None
        self.began = time.monotonic()
        self.played = 0

    def __call__(self, event: TournamentEvent) -> None:
        if isinstance(event, Note):
            say_plain(self.console, event.text)
        elif isinstance(event, Trouble):
            say_trouble(event.text)
        elif isinstance(event, GameStored):
            self._stored(event)
        elif isinstance(event, ScheduleGrew):
            if self.progress is not None and self.task is not None:
                self.progress.update(self.task, total=event.total)
        elif isinstance(event, PlayStarted):
            self._start(event.finished, event.total)
        elif isinstance(event, PlayEnded):
            self.close()

    def close(self) -> None:
        """Take the progress bar off the screen (a run that ended, or failed)."""
        if self.progress is not None:
            self.progress.stop()
            self.progress = None

    def _start(self, finished: int, total: int) -> None:
        self.began, self.played = time.monotonic(), 0
        if not self.console.is_terminal:
            return
        self.progress = Progress(
            TextColumn("[bold]games"),
            BarColumn(),
            MofNCompleteColumn(),
            TaskProgressColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[leader]}", markup=False),
            console=self.console,
            transient=True,
        )
        self.task = self.progress.add_task("games", total=total, completed=finished,
                                           rate="", leader="")
        self.progress.start()

    def _stored(self, event: GameStored) -> None:
        self.played += 1
        done, record = event.finished, event.record
        if not self.settings.quiet:
            say_plain(self.console, f"Finished game {event.job.game_id + 1} "
                                    f"({done}/{event.total}): {record.summary()}")
        if self.settings.records.show_latency:
            for line in latency_lines(record):
                say_plain(self.console, line)
        if self.progress is not None and self.task is not None:
            rate = self.played / max(1e-9, time.monotonic() - self.began)
            lead = event.standings.leader()
            leader = f"leader {visible(lead.name)} {lead.points:g}/{lead.games}" if lead else ""
            self.progress.update(self.task, completed=done, rate=f"{rate:.2f} games/s",
                                 leader=leader)
        every = self.settings.rating_interval
        if every and done % every == 0 and done < event.total:
            print_standings(event.standings, self.console)
