"""``-show-resources``: per engine what it used, as a table after the standings.

The numbers are kept by :class:`~guti.referee.stats.resources.ResourceTable`; read from
the tournament database (:func:`resources_from_store`) or fed game by game (a match).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.table import Table

from guti.referee.process.text import visible
from guti.referee.stats.resources import HEADS, ResourceTable

if TYPE_CHECKING:
    from rich.console import Console

    from guti.referee.storage.store import TournamentStore


def resources_from_store(stores: list[TournamentStore]) -> ResourceTable:
    """What every engine used in the games of ``stores`` (engines matched by name)."""
    names: list[str] = []
    for store in stores:
        names += [n for n in store.engine_names() if n not in names]
    table = ResourceTable(names)
    for store in stores:
        for white, black, uses in store.resource_uses():
            table.add(white, black, uses)
    return table


def resources_table(table: ResourceTable) -> Table:
    """Per engine: peak memory, CPU per move, CPU off its moves."""
    t = Table(title="Resources", title_justify="left")
    for head in HEADS:
        t.add_column(head, justify="left" if head == "engine" else "right")
    for line in table.lines:
        name, *cells = line.cells()
        t.add_row(visible(name), *cells)
    t.caption = ("peak memory: the most the engine held at once, all its processes together "
                 "(from its memory cgroup; * its largest process's peak resident memory, "
                 "VmHWM); CPU per move: from go to bestmove, all its threads; off-move CPU: "
                 "from its bestmove to its next go and to the game's end")
    t.caption_justify = "left"
    return t


def print_resources(table: ResourceTable, console: Console) -> None:
    """The table, or one line saying nothing was measured."""
    if table.measured:
        console.print(resources_table(table))
    else:
        console.print("Resources: not measured in these games (stored by an older guti, "
                      "or not on Linux)", highlight=False)
