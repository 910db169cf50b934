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

A report file has no server to ask for PDN, so it carries the games' PDN itself: the
records :func:`~guti.referee.storage.export.pdn_records` gives (the text ``guti export
-pdn`` writes), gzipped and base64-encoded in a ``<script type="application/octet-stream">``
element, with each game's byte range in the data (``pdn``); the page unpacks it only when
a download is asked for. The scripts are inlined from several files, one concern each
(:data:`REPORT_SCRIPTS`), in one function scope.
"""

from __future__ import annotations

import base64
import gzip
import json
import re
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from guti.referee.game.output_paths import write_whole
from guti.referee.storage.export import pdn_records
from guti.referee.web.data import report_data

if TYPE_CHECKING:
    from guti.referee.stats.sprt import SprtSpec
    from guti.referee.storage.store import TournamentStore

_SAFE = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026",
                       "\u2028": "\\u2028", "\u2029": "\\u2029"})

_MARKER = re.compile(r"/\*(CSS|DATA|PDN|LIVE|JS)\*/")

#: The report's scripts, in the order they are inlined (each uses what those before it
#: define): helpers and data, board, charts, tables, game list, viewer, downloads, start.
REPORT_SCRIPTS = ("common.js", "board.js", "charts.js", "tables.js", "games.js", "viewer.js",
                  "downloads.js", "report.js")


@cache
def asset(name: str) -> str:
    """A file of ``guti/referee/web/static`` as text."""
    return resources.files("guti.referee.web").joinpath("static", name).read_text(encoding="utf-8")


def script_json(data: Any) -> str:
    """``data`` as JSON that is safe inside a ``<script>`` element."""
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False).translate(_SAFE)


def report_script() -> str:
    """The report's scripts (:data:`REPORT_SCRIPTS`) as one strict-mode function."""
    body = "\n".join(asset(name) for name in REPORT_SCRIPTS)
    return '(function () {\n"use strict";\n' + body + "\n})();"


def embedded_pdn(store: TournamentStore) -> tuple[str, list[list[int]]]:
    """Every stored game's PDN for a report file: the whole export (records joined by
    ``"\n"``, as ``guti export -pdn`` writes them) gzipped and base64-encoded, and each
    game's ``[number, first byte, end byte]`` in the unpacked text."""
    chunks: list[bytes] = []
    ranges: list[list[int]] = []
    at = 0
    for number, text in pdn_records(store):
        if chunks:
            chunks.append(b"\n")
            at += 1
        data = text.encode("utf-8")
        chunks.append(data)
        ranges.append([number, at, at + len(data)])
        at += len(data)
    packed = gzip.compress(b"".join(chunks), compresslevel=6, mtime=0)
    return base64.b64encode(packed).decode("ascii"), ranges


def render_page(data: dict[str, Any], live: bool = False, pdn: str = "") -> str:
    """The page for ``data``; ``live`` adds the live page's script (``static/live.js``),
    which connects to the server's event stream; ``pdn``: the games' packed PDN
    (:func:`embedded_pdn`, whose ranges go in ``data["pdn"]``) for a page with no server."""
    parts = {"CSS": asset("report.css"), "DATA": script_json(data), "PDN": pdn,
             "LIVE": "window.GUTI_LIVE = true;" if live else "",
             "JS": report_script() + ("\n" + asset("live.js") if live else "")}
    # One pass over the template only: inserted text is never searched for markers.
    return _MARKER.sub(lambda m: parts[m.group(1)], asset("report.html"))


def write_report(store: TournamentStore, path: str, sprt: SprtSpec | None = None,
                 what: str = "-report") -> int:
    """Write the report of ``store`` to ``path`` (atomically); returns the number of games.
    ``what``: the option that named ``path``, for messages."""
    with store.snapshot():  # the table, the counts and the PDN hold the same games
        data = report_data(store, sprt)
        pdn, data["pdn"] = embedded_pdn(store)
    page = render_page(data, pdn=pdn)
    write_whole(path, lambda fh: fh.write(page), what)
    return len(data["games"])
