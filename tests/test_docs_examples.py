"""The `guti match` examples of the engine author's guide run as written after the README's set-up.

Why: a stranger copies these commands first. They name `guti` and `python3`, which the
README's set-up puts on PATH with `. .venv/bin/activate`; this test runs each example the
same way (the virtualenv's bin directory first on PATH, from the repository root), with
its output files moved into a temporary directory, and expects a finished game.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def _examples() -> list[str]:
    text = (ROOT / "docs" / "engine-authors.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```\n(.*?)```", text, flags=re.S)
    commands = [" ".join(b.replace("\\\n", " ").split()) for b in blocks]
    # ``./myengine`` stands for the reader's own program: the random bot takes its place.
    mine = "cmd=python3 args=bots/python/random_bot.py"
    return [c.replace("cmd=./myengine", mine) for c in commands if c.startswith("guti match")]


def _path_after_setup() -> str:
    """PATH as the README's set-up leaves it: with its activate step, the venv's bin first."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    path = os.environ.get("PATH", "")
    path = os.pathsep.join(p for p in path.split(os.pathsep) if Path(p) != BIN)
    return f"{BIN}{os.pathsep}{path}" if ". .venv/bin/activate" in readme else path


def test_the_examples_were_found():
    assert _examples(), "docs/engine-authors.md has no runnable guti match example"


@pytest.mark.parametrize("command", _examples())
def test_match_example_runs_as_written(command, tmp_path):
    if "bots/c/bot" in command:
        if shutil.which("make") is None or shutil.which("gcc") is None:
            pytest.skip("needs make and gcc for the C bot")
        subprocess.run(["make", "-s", "-C", "bots/c"], cwd=ROOT, check=True)
    argv = shlex.split(command)
    argv = [re.sub(r"^file=(.*)$", lambda m: f"file={tmp_path / m.group(1)}", a) for a in argv]
    if "-games" in argv:  # the games themselves are not the point: two are enough
        argv[argv.index("-games") + 1] = "2"
    env = dict(os.environ, PATH=_path_after_setup())
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    pdn = next(tmp_path.glob("*.pdn")).read_text(encoding="utf-8")
    assert '[Result "' in pdn and '[Result "*"]' not in pdn
