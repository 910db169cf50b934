"""The optional watcher of a game in progress (the live page uses it; nothing requires it).

Why a protocol here: the game loop (:mod:`guti.referee.game.runner`) must not know who watches,
only that someone may, so it calls :meth:`MoveObserver.moved` after every judged move and
does nothing else. An observer must return at once (it runs in the game's event loop): a
slow watcher must never slow a game.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from guti.referee.game.record import GameRecord
    from guti.rules import Board


class MoveObserver(Protocol):
    def moved(self, record: GameRecord, board: Board) -> None:
        """``record.moves[-1]`` was just played; ``board`` is the position after it."""
