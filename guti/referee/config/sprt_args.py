"""``-sprt elo0=E0 elo1=E1 alpha=A beta=B model=M``, read and checked: one reading for a
tournament's flags and file and for ``guti standings``, ``report`` and ``serve``, which
read a database and so need none of the tournament's settings model."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from guti.referee.config.args import CliError
from guti.referee.stats.sprt import SprtModel, SprtSpec
from guti.rules.numbers import decimal_number

if TYPE_CHECKING:
    from typing import Any

    from guti.referee.config.args import ParsedArgs
    from guti.referee.storage.store import TournamentStore

#: What an SPRT counts, for the lines that refuse one where it cannot.
PAIRS_RULE = "an SPRT counts game pairs with the colours reversed"


def unpaired(games: int, noswap: bool) -> str | None:
    """The setting under which games are not played in pairs with the colours reversed
    (``-games 3``: a pair never completes; ``-noswap``: both games of a pair alike, which
    would test who moves first), None when they are: the one rule for a tournament's
    ``-sprt`` and for an SPRT asked of a stored one."""
    if games % 2:
        return f"-games {games}"
    return "-noswap" if noswap else None


def check_stored_pairs(stores: list[TournamentStore]) -> None:
    """CliError for ``-sprt`` asked of a stored tournament not played in pairs (see
    :func:`unpaired`): its SPRT would say "continue" on no pair, or test who moves first."""
    for store in stores:
        settings: dict[str, Any] = store.settings()
        games = settings.get("games", 2)
        why = unpaired(games if isinstance(games, int) else 2, bool(settings.get("noswap")))
        if why is not None:
            raise CliError(f"-sprt: {store.path} was played with {why} ({PAIRS_RULE})")


def sprt_from_args(args: ParsedArgs) -> SprtSpec | None:
    """The ``-sprt`` settings of a command line (``guti standings``, ``report``, ``serve``),
    checked; None when not given."""
    return read_sprt(args.token_dict("sprt"))


def read_sprt(spec: dict[str, str], where: str = "-sprt") -> SprtSpec | None:
    """The ``-sprt`` settings given at ``where``, checked (None when not given): elo0 and
    elo1 within :data:`~guti.referee.stats.sprt.MAX_SPRT_ELO` of 0 for the model, where
    an SPRT means something and its LLR can be computed for any results."""
    if not spec:
        return None
    numbers: dict[str, float] = {}
    for key in ("elo0", "elo1", "alpha", "beta"):
        if key in spec:
            read = decimal_number(spec[key])
            numbers[key] = math.nan if read is None else read
            if not math.isfinite(numbers[key]):
                raise CliError(f"{where} {key}={spec[key]}: not a number")
    model = spec.get("model", "normalized")
    if model not in _SPRT_MODELS:
        raise CliError(f"{where} model={model}: expected normalized or logistic")
    sprt = SprtSpec(**numbers, model=_SPRT_MODELS[model])
    why = sprt.problem()
    if why is not None:
        raise CliError(f"{where} {why}")
    return sprt


_SPRT_MODELS: dict[str, SprtModel] = {"normalized": "normalized", "logistic": "logistic"}
