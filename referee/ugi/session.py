"""Small UGI conversations on top of :class:`~referee.process.engine_process.EngineProcess`.

The match runner's ``handshake`` needs to know the game before it starts; the
console and the conformance check need to see the engine's options first
(to pick or check a game) and to time each step. These helpers do the
steps one by one, with every wait bounded, and leave the game choice to
the caller. They read lines with ``EngineProcess.read_line`` and so must not
run while another task is reading the same engine.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from engine.rules import GAMES
from referee.process.engine_process import (
    EngineOption,
    EngineProcess,
    EngineTimeout,
    note_handshake_line,
)


@dataclass
class Handshake:
    """What the engine said between ``ugi`` and ``ugiok`` and how long it took."""

    id_name: str | None = None
    id_author: str | None = None
    options: dict[str, EngineOption] = field(default_factory=dict)  # by lower-case name
    other_lines: list[str] = field(default_factory=list)
    elapsed: float = 0.0

    @property
    def variant(self) -> EngineOption | None:
        return self.options.get("ugi_variant")

    def games(self) -> list[str]:
        """The games the engine says it plays, in its order (egara-guti when it declares none)."""
        variant = self.variant
        if variant is None:
            return ["egara-guti"]
        if variant.vars:
            return list(variant.vars)
        return [variant.default] if variant.default else ["egara-guti"]

    def known_games(self) -> list[str]:
        """Declared games guti has rules for."""
        return [g for g in self.games() if g in GAMES]

    def default_game(self) -> str | None:
        """The game to play when none is asked for: the option's default if guti knows it."""
        variant = self.variant
        if variant is not None and variant.default in GAMES:
            return variant.default
        known = self.known_games()
        return known[0] if known else None


async def ugi_handshake(eng: EngineProcess, timeout: float) -> Handshake:
    """Send ``ugi`` and read up to ``ugiok``; raises EngineTimeout / EngineDisconnected.

    Also fills ``eng.id_name``, ``eng.id_author`` and ``eng.options`` like the
    match runner's handshake does.
    """
    result = Handshake()
    start = time.monotonic()
    deadline = start + timeout
    eng.send("ugi")
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise EngineTimeout(f"engine {eng.name}: no ugiok within {timeout:g} s of ugi")
        try:
            line = await eng.read_line(remaining)
        except EngineTimeout:
            raise EngineTimeout(f"engine {eng.name}: no ugiok within {timeout:g} s of ugi") from None
        if line.split()[:1] == ["ugiok"]:
            break
        if line.strip() and not note_handshake_line(line, result):
            result.other_lines.append(line)
    result.elapsed = time.monotonic() - start
    eng.id_name, eng.id_author = result.id_name, result.id_author
    eng.options = dict(result.options)
    return result


async def read_until(
    eng: EngineProcess, done: Callable[[str], bool], timeout: float
) -> list[str]:
    """Lines up to and including the first for which ``done`` is true, within ``timeout`` s.

    On timeout the EngineTimeout carries the lines seen so far as ``.lines``.
    """
    deadline = time.monotonic() + timeout
    seen: list[str] = []
    while True:
        remaining = deadline - time.monotonic()
        try:
            if remaining <= 0:
                raise EngineTimeout(f"engine {eng.name} did not answer in time")
            line = await eng.read_line(remaining)
        except EngineTimeout as exc:
            exc.lines = seen  # type: ignore[attr-defined]
            raise
        seen.append(line)
        if done(line):
            return seen


async def sync(eng: EngineProcess, timeout: float) -> list[str]:
    """``isready`` and the lines up to ``readyok`` (which is included)."""
    eng.send("isready")
    return await read_until(eng, lambda line: line.strip() == "readyok", timeout)


def variant_setoption(hs: Handshake, game: str) -> str | None:
    """The ``setoption`` line selecting ``game``, or None if the engine has no UGI_Variant."""
    variant = hs.variant
    if variant is None:
        return None
    return f"setoption name {variant.name} value {game}"


def split_engine_argv(
    argv: list[str], valued: tuple[str, ...] = ("--game",)
) -> tuple[list[str], list[str]]:
    """Split ``[OPTIONS...] -- ENGINE_CMD [ARGS...]`` into (options, engine argv).

    Without ``--`` the engine command starts at the first word that is neither an
    option nor the value of one of the ``valued`` options, so ``guti check ./bot``
    works too; ``--`` is needed only when the engine's own arguments look like ours.
    """
    if "--" in argv:
        cut = argv.index("--")
        return argv[:cut], argv[cut + 1 :]
    i = 0
    while i < len(argv):
        word = argv[i]
        if word in valued:
            i += 2
        elif word.startswith("-"):
            i += 1
        else:
            break
    return argv[:i], argv[i:]
