"""Whole numbers read from text a person or a program wrote: ASCII digits, bounded.

Why not ``int`` or ``str.isdigit`` alone: ``isdigit`` passes digits ``int`` refuses
(``"²"``), ``int`` also reads other scripts' digits (``"٣"``), blanks and underscores, and
a number of thousands of digits makes ``int`` raise. Every reader of such numbers (moves
here, the referee's flags, files, engine lines and browser queries, the reference
engine's commands) goes through :func:`whole_number`.
"""

from __future__ import annotations


def whole_number(text: str, max_digits: int = 18, signed: bool = False) -> int | None:
    """``text`` as a whole number written in ASCII digits alone (at most ``max_digits``
    of them; with ``signed``, a ``+`` or ``-`` before them); None for anything else."""
    digits = text[1:] if signed and text[:1] in "+-" else text
    if not (0 < len(digits) <= max_digits and digits.isascii() and digits.isdigit()):
        return None
    return int(text)
