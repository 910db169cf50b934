"""The site's CLI reference holds every flag the real ``--help`` prints.

Why: the reference page is generated from ``guti/referee/config/option_specs.py`` by an
MkDocs hook (``docs/hooks/cli_reference.py``), so a flag added there appears on the site
without another edit. This test renders the reference with that hook's own function and
runs the real ``guti match --help``, ``guti tournament --help`` and ``guti tune --help``: every flag and every
documented key they print must be in the rendered page.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
HOOK = ROOT / "docs" / "hooks" / "cli_reference.py"
GUTI = [sys.executable, "-c", "from guti.cli import main; main()"]


def _hook() -> ModuleType:
    spec = importlib.util.spec_from_file_location("cli_reference_hook", HOOK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _help(command: str) -> str:
    done = subprocess.run([*GUTI, command, "--help"], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _flags(help_text: str) -> list[str]:
    return re.findall(r"^  -([a-z][a-z-]*)\b", help_text, flags=re.M)


def _keys(help_text: str) -> list[str]:
    return re.findall(r"^      (\S+)", help_text, flags=re.M)


@pytest.mark.parametrize("command", ["match", "tournament", "tune"])
def test_every_flag_of_the_help_is_in_the_reference(command: str) -> None:
    reference = _hook().render_reference()
    help_text = _help(command)
    flags = _flags(help_text)
    assert len(flags) >= 20 and "engine" in flags, help_text
    missing = [f for f in flags if f"| `-{f}` |" not in reference]
    assert not missing, f"flags of guti {command} --help missing from the reference: {missing}"
    keys = _keys(help_text)
    assert "cmd=PATH" in keys
    assert not [k for k in keys if f"`{k}`" not in reference]


def test_tournament_flags_are_under_the_tournament_heading() -> None:
    reference = _hook().render_reference()
    match_part, tournament_part = reference.split("## guti tournament")
    only_tournament = set(_flags(_help("tournament"))) - set(_flags(_help("match")))
    assert {"resume", "concurrency", "sprt"} <= only_tournament
    for flag in only_tournament:
        assert f"| `-{flag}` |" in tournament_part and f"| `-{flag}` |" not in match_part


def test_the_site_page_carries_the_placeholder_the_hook_fills() -> None:
    hook = _hook()
    page = (ROOT / "docs" / "reference" / "cli.md").read_text(encoding="utf-8")
    assert hook.PLACEHOLDER in page
    rendered = hook.on_page_markdown(page)
    assert hook.PLACEHOLDER not in rendered and "| `-engine` |" in rendered
    mkdocs = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert "docs/hooks/cli_reference.py" in mkdocs


@pytest.mark.parametrize("command", ["match", "tournament", "tune", "standings", "export",
                                     "report", "serve", "board", "perft", "check", "console",
                                     "bench", "engine"])
def test_every_command_answers_h_as_help(command: str) -> None:
    done = subprocess.run([*GUTI, command, "-h"], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert "usage" in done.stdout.lower(), done.stdout
