"""The one error type of the rules core.

Everything a user can get wrong (a FEN, a move string, a game name) raises
:class:`RulesError` with a one-line message that says what was wrong and
where, so callers (the engine, the referee, the CLI) can show it verbatim
and carry on. It subclasses ``ValueError`` because that is what it is.
"""

from __future__ import annotations


class RulesError(ValueError):
    """Bad input to the rules core: the message is one line, fit to show a user."""
