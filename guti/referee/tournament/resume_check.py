"""What a ``-resume`` must find as it was: the settings that decide the games (the
fingerprint compares them; :func:`changed_settings` names which differ), the stopping
rule (:func:`sprt_mismatch`) and the openings file a resume reads again
(:func:`openings_changed`). Each is given the stored settings, read once by the caller."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from guti.referee.stats.sprt import SprtSpec

if TYPE_CHECKING:
    from guti.referee.tournament.settings import TournamentSettings


def as_stored(value: Any) -> Any:
    """``value`` as the database's JSON keeps it (tuples as lists, keys as strings), to
    compare with what was stored."""
    return json.loads(json.dumps(value))


def sprt_mismatch(stored: dict[str, Any], settings: TournamentSettings) -> str | None:
    """Why a resume may not go on under ``settings``' SPRT, or None. A resume keeps the
    stopping rule it began with. The SPRT is not in the fingerprint (a database stored
    before it would have been put there could no longer resume), but the stored settings
    tell what it was (its form is checked with the database's, by
    :mod:`~guti.referee.storage.integrity`)."""
    if "sprt" not in stored:
        return None
    given = as_stored(settings.describe()["sprt"])
    if stored["sprt"] == given:
        return None

    def words(spec: dict[str, Any] | None) -> str:
        return "without -sprt" if spec is None else f"with -sprt {SprtSpec(**spec).describe()}"

    return (f"{settings.db_path} was started {words(stored['sprt'])}, and this run is "
            f"{words(given)}: resume it with its own -sprt")


def changed_settings(stored: dict[str, Any], settings: TournamentSettings) -> str:
    """Which of the settings that decide the games differ from the stored tournament's
    (``other openings``), as far as the stored settings tell."""
    given = as_stored(settings.fingerprint_data)
    # not deciding (the openings file's digest is checked apart: openings_changed)
    kept_besides = settings.describe().keys() - given.keys() | {"seed", "openings_digest"}
    keys = [key for key in sorted(given.keys() | stored.keys() - kept_besides)
            if given.get(key) != stored.get(key)]
    if not keys:
        return "other engines, games or settings"
    return "other " + ", ".join(_engines_changed(given.get("engines"), stored.get("engines"))
                                if key == "engines" else key for key in keys)


def _engines_changed(given: Any, stored: Any) -> str:
    """``engines``, with what differs in them when the engines are the same ones
    (``engines (limits of A)``: a time control given again otherwise)."""
    if not (isinstance(given, list) and isinstance(stored, list) and len(given) == len(stored)
            and all(isinstance(e, dict) for e in given + stored)):
        return "engines"
    parts = [f"{field} of {now.get('name')}" for now, was in zip(given, stored, strict=True)
             for field in sorted(now.keys() | was.keys()) if now.get(field) != was.get(field)]
    if not parts:
        return "engines"
    shown = ", ".join(parts[:3]) + (f" and {len(parts) - 3} more" if len(parts) > 3 else "")
    return f"engines ({shown})"


def openings_changed(stored: dict[str, Any], settings: TournamentSettings) -> str | None:
    """Why a resume that reads the openings file again may not go on, or None: the file
    is not the one the tournament began with (its contents differ), so the rounds still to
    come would draw other openings than those it was started for."""
    held = stored.get("openings_digest")
    if held is None or settings.openings_digest is None or held == settings.openings_digest:
        return None
    name = settings.fingerprint_data.get("openings", {}).get("file", "")
    return (f"{settings.db_path}: the openings file {name} is not what it was when the "
            "tournament began (its contents differ): resume it with that file as it was")
