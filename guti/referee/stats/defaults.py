"""The defaults of the statistics, each written once here.

Why apart from :mod:`guti.referee.stats.ratings`: ``--help`` shows them and should not
import the rating code to print them (start-up time). This module imports nothing.
"""

from __future__ import annotations

#: How the ratings count a draw (``-drawmodel``): as half a win.
DEFAULT_DRAW_MODEL = "half"
