"""What a ``-resume`` must find as it was: the settings that decide the games (the
fingerprint compares them; :func:`changed_settings` names which differ), the stopping
rule (:func:`sprt_mismatch`) and the openings file a resume reads again
(:func:`openings_changed`)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from guti.referee.storage.store import TournamentStore
    from guti.referee.tournament.settings import TournamentSettings


def sprt_mismatch(store: TournamentStore, settings: TournamentSettings) -> str | None:
    """Why a resume may not go on under ``settings``' SPRT, or None. A resume keeps the
    stopping rule it began with. The SPRT is not in the fingerprint (a database stored
    before it would have been put there could no longer resume), but the stored settings
    tell what it was."""
    stored = store.settings()
    if "sprt" not in stored:
        return None
    given = json.loads(json.dumps(settings.describe()["sprt"]))  # as JSON keeps it
    if stored["sprt"] == given:
        return None

    def words(spec: dict[str, Any] | None) -> str:
        if spec is None:
            return "without -sprt"
        keys = ("elo0", "elo1", "alpha", "beta", "model")  # in the order they are written
        return "with -sprt " + " ".join(
            f"{key}={spec[key]:g}" if isinstance(spec[key], float) else f"{key}={spec[key]}"
            for key in sorted(spec, key=lambda k: keys.index(k) if k in keys else len(keys)))

    return (f"{settings.db_path} was started {words(stored['sprt'])}, and this run is "
            f"{words(given)}: resume it with its own -sprt")


def changed_settings(store: TournamentStore, settings: TournamentSettings) -> str:
    """Which of the settings that decide the games differ from the stored tournament's
    (``other openings``), as far as the stored settings tell."""
    stored = store.settings()
    given = json.loads(json.dumps(settings.fingerprint_data))  # as JSON keeps it
    # not deciding (the openings file's digest is checked apart: openings_changed)
    kept_besides = settings.describe().keys() - given.keys() | {"seed", "openings_digest"}
    keys = [key for key in sorted(given.keys() | stored.keys() - kept_besides)
            if given.get(key) != stored.get(key)]
    if not keys:
        return "other engines, games or settings"
    return "other " + ", ".join(keys)


def openings_changed(store: TournamentStore, settings: TournamentSettings) -> str | None:
    """Why a resume that reads the openings file again may not go on, or None: the file
    is not the one the tournament began with (its contents differ), so the rounds still to
    come would draw other openings than those it was started for."""
    held = store.settings().get("openings_digest")
    if held is None or settings.openings_digest is None or held == settings.openings_digest:
        return None
    name = settings.fingerprint_data.get("openings", {}).get("file", "")
    return (f"{settings.db_path}: the openings file {name} is not what it was when the "
            "tournament began (its contents differ): resume it with that file as it was")
