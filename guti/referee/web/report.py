"""The tournament as one self-contained HTML file: works from ``file://``, no network.

The page is a fixed template (``static/report.html``) with its CSS and JavaScript inlined
and the tournament's data (:func:`guti.referee.web.data.report_data`) embedded as JSON in a
``<script type="application/json">`` element. Why this shape: every string an engine or a
config supplied reaches the page only inside that JSON, with ``<``, ``>`` and ``&``
written as ``\\u`` escapes (so no text can close the script element), and the JavaScript
puts it on the page with ``textContent`` only; a Content-Security-Policy forbids any
network access. The file is written like the exports
(:func:`~guti.referee.game.output_paths.write_whole`: ``FILE.tmp`` renamed over it; a
device or a FIFO written into, a symlink written through).
"""

from __future__ import annotations

import json
import re
from functools import cache
from importlib import resources
from typing import Any

from guti.referee.game.output_paths import write_whole
from guti.referee.stats.sprt import SprtSpec
from guti.referee.storage.store import TournamentStore
from guti.referee.web.data import report_data

_SAFE = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026",
                       "\u2028": "\\u2028", "\u2029": "\\u2029"})

_MARKER = re.compile(r"/\*(CSS|DATA|LIVE|JS)\*/")


@cache
def asset(name: str) -> str:
    """A file of ``guti/referee/web/static`` as text."""
    return resources.files("guti.referee.web").joinpath("static", name).read_text(encoding="utf-8")


def script_json(data: Any) -> str:
    """``data`` as JSON that is safe inside a ``<script>`` element."""
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False).translate(_SAFE)


def render_page(data: dict[str, Any], live: bool = False) -> str:
    """The page for ``data``; ``live`` adds the live page's script (``static/live.js``),
    which connects to the server's event stream."""
    parts = {"CSS": asset("report.css"), "DATA": script_json(data),
             "LIVE": "window.GUTI_LIVE = true;" if live else "",
             "JS": asset("report.js") + ("\n" + asset("live.js") if live else "")}
    # One pass over the template only: inserted text is never searched for markers.
    return _MARKER.sub(lambda m: parts[m.group(1)], asset("report.html"))


def write_report(store: TournamentStore, path: str, sprt: SprtSpec | None = None,
                 what: str = "-report") -> int:
    """Write the report of ``store`` to ``path`` (atomically); returns the number of games.
    ``what``: the option that named ``path``, for messages."""
    data = report_data(store, sprt)
    page = render_page(data)
    write_whole(path, lambda fh: fh.write(page), what)
    return len(data["games"])
