"""MkDocs hook: pages whose text lives at the repository's top, shown in the site.

``protocol.md`` is the normative protocol and stays at the top of the repository, where
engine authors look for it; ``CHANGELOG.md`` stays there too. A page of the site that holds
``<!-- include: FILE -->`` gets FILE's text in its place. Links in that text are written
from the repository's top (``docs/rules/pretwa.md``), so they are rewritten to be relative
to the site's pages (``rules/pretwa.md``); the included file needs no second copy.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

REPOSITORY = Path(__file__).resolve().parents[2]
INCLUDE = re.compile(r"<!-- include: (?P<file>[\w./-]+) -->")
LINK_INTO_DOCS = re.compile(r"\]\(docs/")


def _included(match: re.Match[str]) -> str:
    text = (REPOSITORY / match["file"]).read_text(encoding="utf-8")
    return LINK_INTO_DOCS.sub("](", text)


def on_page_markdown(markdown: str, **_: Any) -> str:
    """Replace each include marker by the file's text, its links made site-relative."""
    return INCLUDE.sub(_included, markdown)
