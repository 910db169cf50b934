"""Text from users and engines made safe to show: :func:`visible`, the one function for it.

Why: engine names, ``id name`` lines, stderr tails and move lines are written by
programs guti does not trust. Raw, an ``ESC [2J`` clears the user's screen, an
``ESC ]0;...`` retitles the window, a newline splits a one-line summary and a ``\\r``
sits in a PDN tag. Every terminal, PDN and log output passes such text through
:func:`visible`, which shows each control character escaped (``\\x1b``, ``\\n``,
``\\r``, ``\\t``, ``\\x9b``), and so does the Unicode line and paragraph separators
(U+2028, U+2029: a terminal table breaks its row at them) and the direction overrides that
can make text read differently than it is. Everything else, accents and all, stays as it is.
(Rich markup such as ``[/]`` is a separate matter: consoles print with markup off.)

It lives in the lowest layer, where engine text enters guti, so that every layer above
(game records, tournament displays, tools, the command line) can use the same one.
"""

from __future__ import annotations

import unicodedata

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
#: Direction embeddings/overrides/isolates (Trojan-source style reordering).
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f")


def _escape(char: str) -> str:
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """``text`` with control characters (C0, DEL, C1), line and paragraph separators and
    direction overrides escaped."""
    if text.isprintable():
        return text
    return "".join(
        _escape(c) if c in _BIDI or unicodedata.category(c) in _ESCAPED else c for c in text
    )


#: Unicode categories shown escaped: controls, line and paragraph separators.
_ESCAPED = frozenset({"Cc", "Zl", "Zp"})

