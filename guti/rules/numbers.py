"""Numbers read from text a person or a program wrote: ASCII digits, bounded.

Why not ``int`` or ``str.isdigit`` alone: ``isdigit`` passes digits ``int`` refuses
(``"²"``), ``int`` also reads other scripts' digits (``"٣"``), blanks and underscores, and
a number of thousands of digits makes ``int`` raise. Every reader of such numbers (moves
here, the referee's flags, files, engine lines and browser queries, the reference
engine's commands) goes through :func:`whole_number`, and every reader of a decimal
(seconds, SPRT bounds, tuning parameters) through :func:`decimal_number`.
"""

from __future__ import annotations

import re

#: A decimal number as people write one: ``7``, ``-1.5``, ``.5``, ``2e3``, in ASCII.
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]{1,4})?")


def whole_number(text: str, max_digits: int = 18, signed: bool = False) -> int | None:
    """``text`` as a whole number written in ASCII digits alone (at most ``max_digits``
    of them; with ``signed``, a ``+`` or ``-`` before them); None for anything else."""
    digits = text[1:] if signed and text[:1] in "+-" else text
    if not (0 < len(digits) <= max_digits and digits.isascii() and digits.isdigit()):
        return None
    return int(text)


def decimal_number(text: str) -> float | None:
    """``text`` (blanks around it aside) as a decimal number written in ASCII (``1.5``,
    ``-2``, ``.5``, ``1e3``); None for anything else, where ``float`` would also read
    ``4_0`` as 40, other scripts' digits, ``inf`` and ``nan``. Past a float's range it is
    ``inf``: a caller that needs a finite number checks."""
    text = text.strip()
    if len(text) > 400 or not _DECIMAL.fullmatch(text):
        return None
    return float(text)
