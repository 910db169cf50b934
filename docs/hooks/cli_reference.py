"""MkDocs hook: the CLI reference, rendered from the one place the flags are defined.

``guti/referee/config/option_specs.py`` holds every flag of ``guti match``,
``guti tournament`` and ``guti tune`` with its help text and keys, as plain data; ``--help`` prints it and
this hook renders it into the page that carries :data:`PLACEHOLDER`, so a flag added
there appears on the site without another edit. ``tests/test_cli_reference.py`` renders
the reference with :func:`render_reference` and checks it against the real ``--help``.
"""

from __future__ import annotations

import html
import sys
from pathlib import Path
from typing import Any

REPOSITORY = Path(__file__).resolve().parents[2]
if str(REPOSITORY) not in sys.path:  # mkdocs runs hooks without the project on the path
    sys.path.insert(0, str(REPOSITORY))

from guti.referee.config.args import Kind, OptionSpec  # noqa: E402
from guti.referee.config.option_specs import (  # noqa: E402
    MATCH_OPTIONS,
    TOURNAMENT_OPTIONS,
    TUNE_OPTIONS,
)

#: The marker a page puts where the generated tables go.
PLACEHOLDER = "<!-- cli-reference -->"

#: What follows a flag on the command line, for each kind of option (as ``--help`` shows it).
ARGUMENT = {Kind.FLAG: "", Kind.VALUE: "V", Kind.OPTIONAL: "[V]", Kind.TEXT: "TEXT",
            Kind.TOKENS: "key=value..."}


def _cell(text: str) -> str:
    """Plain text made safe for a Markdown table cell: HTML escaped, pipes kept as text.
    (A code span needs none of this: the table reader leaves pipes inside backticks.)"""
    return html.escape(text, quote=False).replace("|", "&#124;").replace("*", "&#42;")


def _row(spec: OptionSpec) -> str:
    argument = f"`{ARGUMENT[spec.kind]}`" if ARGUMENT[spec.kind] else ""
    if spec.repeatable:
        argument += " (repeatable)"
    meaning = _cell(spec.help)
    for key, text in spec.key_help:
        meaning += f"<br>`{key}`: {_cell(text)}"
    return f"| `-{spec.name}` | {argument} | {meaning} |"


def _table(specs: list[OptionSpec]) -> str:
    rows = ["| flag | argument | what it does |", "|---|---|---|"]
    rows += [_row(spec) for spec in specs]
    return "\n".join(rows)


def render_reference() -> str:
    """The flags of ``guti match``, those ``guti tournament`` adds, and ``guti tune``'s, as
    Markdown."""
    match_names = {spec.name for spec in MATCH_OPTIONS}
    added = [spec for spec in TOURNAMENT_OPTIONS if spec.name not in match_names]
    return "\n".join([
        "## guti match",
        "",
        "`guti match [options]`: games between two engines. Every flag is also accepted "
        "with two dashes (`--games`).",
        "",
        _table(MATCH_OPTIONS),
        "",
        "## guti tournament",
        "",
        "`guti tournament [FILE.toml] [options]`: every flag of `guti match` above, and "
        "these:",
        "",
        _table(added),
        "",
        "## guti tune",
        "",
        "`guti tune [FILE.toml] [options]`: tune one engine's options by self-play (SPSA; "
        "see [Tuning](../guide/tuning.md)):",
        "",
        _table(TUNE_OPTIONS),
        "",
    ])


def on_page_markdown(markdown: str, **_: Any) -> str:
    """Put the generated reference where a page has the placeholder."""
    if PLACEHOLDER in markdown:
        return markdown.replace(PLACEHOLDER, render_reference())
    return markdown
