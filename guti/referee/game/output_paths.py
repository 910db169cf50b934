"""One behaviour for every file guti writes (``-pdnout``, ``-db``, ``-log``, ``export -pdn/-json``):
its missing parent folders are created, as cutechess-cli does for ``-pgnout``.

Why one function: the outputs used to differ (``-db`` and ``-pdnout`` created folders,
``export -json`` failed on the same path), which a newcomer can only learn by trying.
"""

from __future__ import annotations

import os


def create_parent_dirs(path: str) -> None:
    """Create the folders ``path`` needs (OSError, with the folder as ``filename``,
    when one cannot be made, e.g. a file is in the way)."""
    folder = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        raise OSError(exc.errno, f"cannot create the folder for {path}: {exc.strerror}",
                      folder) from None
