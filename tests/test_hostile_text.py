"""Hostile text from users and engines is shown as text (README, reliability).

Engine names with rich markup (``[/]``, ``guti [old]``), terminal escape sequences
(clear screen, window title), newlines and carriage returns, in names, ``id name``
lines and stderr tails: every terminal, PDN and log output shows them escaped
(``\\x1b``), one summary per line, and ``guti standings`` reads the database back.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import GUTI, ROOT, parse_pdn

FAULTY = str(ROOT / "tests" / "engines" / "faulty.py")
PY = sys.executable
#: Control characters that must never reach an output (newline aside, where it ends a line).
RAW = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u202e\u2028\u2029]")
ESCAPES = "evil\x1b]0;pwned\x07\x1b[2J"


def engine(name: str, *extra: str) -> list[str]:
    return ["-engine", f"cmd={PY}", f"args={FAULTY} {' '.join(extra)}", f"name={name}"]


def guti(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*GUTI, *args], cwd=cwd, capture_output=True, text=True, timeout=180,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


@pytest.mark.slow
def test_tournament_shows_markup_and_escapes_as_text_everywhere(tmp_path):
    crash = ["--mode", "crash", "--at", "2", "--stderr", "'boom\\x1b[2J\\x1b]0;title\\x07'"]
    done = guti("tournament", *engine("[/]"), *engine("guti [old]"), *engine("guti [new]"),
                *engine(ESCAPES, *crash), *engine("two\nlines\r\u2028"),
                "-each", "tc=30+0.5", "-games", "2", "-db", "t.db", "-pdnout", "t.pdn",
                "-log", "file=t.log", cwd=tmp_path)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert not RAW.search(out), repr(RAW.search(out))
    assert "guti [old]" in done.stdout and "guti [new]" in done.stdout and "[/]" in done.stdout
    assert "evil\\x1b]0;pwned\\x07\\x1b[2J" in done.stdout and "two\\nlines\\r\\u2028" in done.stdout
    finished = [line for line in done.stdout.splitlines() if line.startswith("Finished game")]
    assert len(finished) == 20  # 5 engines, 10 encounters of 2: one line each
    assert any("boom\\x1b[2J" in line for line in finished), finished  # stderr tail, escaped
    for name in ("t.pdn", "t.log"):
        text = (tmp_path / name).read_text()
        assert not RAW.search(text), (name, repr(RAW.search(text)))
    pdn = parse_pdn((tmp_path / "t.pdn").read_text())
    assert len(pdn) == 20
    assert {g.tags["White"] for g in pdn} >= {"[/]", "guti [old]", "guti [new]"}
    table = guti("standings", "t.db", cwd=tmp_path)
    assert table.returncode == 0, table.stderr
    assert not RAW.search(table.stdout + table.stderr)
    assert "guti [old]" in table.stdout and "guti [new]" in table.stdout and "[/]" in table.stdout
    exported = guti("export", "t.db", "-json", "t.json", cwd=tmp_path)
    assert exported.returncode == 0
    names = {g["white"] for g in json.loads((tmp_path / "t.json").read_text())}
    assert ESCAPES in names  # stored as it was: only the display is escaped


def test_visible_escapes_controls_line_separators_and_overrides():
    from guti.referee.process.text import visible

    assert visible("a\u2028b\u2029c\x1bd\u202e é\t") == "a\\u2028b\\u2029c\\x1bd\\u202e é\\t"
    assert visible("plain é ü") == "plain é ü"


def test_match_lines_and_start_failure_messages_are_escaped(tmp_path):
    done = guti("match", *engine(ESCAPES, "--mode", "crash", "--at", "1", "--stderr",
                                 "'boom\\x1b[2J'"), *engine("[/]"), "-each", "tc=30+0.5",
                "-games", "2", "-pdnout", "m.pdn", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert not RAW.search(done.stdout + done.stderr)
    lines = [line for line in done.stdout.splitlines() if line.startswith("Game ")]
    assert len(lines) == 2 and all("evil\\x1b" in line for line in lines)
    assert "Score of evil\\x1b]0;pwned\\x07\\x1b[2J vs [/]" in done.stdout
    assert not RAW.search((tmp_path / "m.pdn").read_text())
    failed = guti("match", *engine(ESCAPES, "--mode", "startup-crash", "--stderr",
                                   "'x\\x1b[2J'"), *engine("b"), "-each", "tc=30+0.5",
                  cwd=tmp_path)
    assert failed.returncode == 2 and not RAW.search(failed.stdout + failed.stderr)
    assert len(failed.stderr.strip().splitlines()) == 1


def test_check_shows_an_escaping_id_name_escaped(tmp_path):
    done = subprocess.run([*GUTI, "check", "--game", "pretwa", "--", PY, FAULTY, "--name",
                           "x\\x1b[2J\\x1b]0;t\\x07"], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert not RAW.search(done.stdout + done.stderr), repr(RAW.search(done.stdout))
    assert "x\\x1b[2J" in done.stdout


def test_console_screen_shows_engine_lines_escaped():
    from guti.referee.tools.console_io import Screen

    stream = io.StringIO()
    screen = Screen(stream, colour=False)
    screen.log = io.StringIO()
    screen.traffic(0.0, "<", "info string \x1b[2J\x1b]0;t\x07 [/] [bold]")
    screen.say("id name \x1b[31mred")
    shown = stream.getvalue() + screen.log.getvalue()
    assert not RAW.search(shown) and "\\x1b[2J" in shown and "[/] [bold]" in shown
