"""Output files of a run checked before anything is written: none is a directory, no
two are the same file.

Why: ``-pdnout`` equal to ``-db`` turned the database into PDN text, ``-log`` equal to
``-db`` lost the traffic log, and a ``-pdnout`` naming a directory had it renamed to
``.bak``. Paths are compared resolved (``realpath``: symlinks, ``..``) and, when both
exist, with ``samefile`` (hard links). The side files guti writes next to an output
(the database's ``-wal``/``-shm``/``.lock``, the PDN's ``.sync``/``.bak``/``.tmp``) count
as that output's. Engines' ``stderr=`` files may be shared between engines (each
appends), but not with any other output.
"""

from __future__ import annotations

import os

from guti.referee.config.args import CliError

_SIDE_FILES = {"-db": ("-wal", "-shm", ".lock"), "-pdnout": (".sync", ".bak", ".tmp"),
               "-epdout": (".sync", ".bak")}


def _same(a: str, b: str) -> bool:
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def check_outputs(outputs: list[tuple[str, str | None]]) -> None:
    """``outputs``: ``(what, path)`` pairs such as ``("-db", "guti.db")``; an engine's
    stderr file is ``("stderr", path)``. CliError (one line, exit 2) on a clash."""
    seen: list[tuple[str, str]] = []
    for what, path in outputs:
        if not path:
            continue
        if os.path.isdir(path):
            raise CliError(f"{what} {path}: is a directory, not a file")
        names = [path] + [path + suffix for suffix in _SIDE_FILES.get(what, ())]
        for name in names:
            for other_what, other in seen:
                if what == other_what == "stderr" and name == path:
                    continue
                if _same(name, other):
                    raise CliError(f"{what} {path} and {other_what} {other} are the same file")
        seen += [(what, name) for name in names]
