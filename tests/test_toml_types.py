"""Every key of a TOML tournament file has one type: a value of another type is one line
naming the file and the key, exit 2, before anything is written (reliability page,
"Input and output checks"). Through the real ``guti``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import GUTI, ROOT

PY = sys.executable
FAULTY = str(ROOT / "tests" / "engines" / "faulty.py")


def engines(extra: str = "") -> str:
    return "".join(f'[[engine]]\nname = "{name}"\ncmd = "{{python}}"\nargs = ["{FAULTY}"]\n'
                   f"{extra}\n" for name in ("a", "b"))


@pytest.mark.parametrize("top, engine_extra, where, message", [
    ("report = false", "", "t.toml: report", "expected a string (in quotes), got false"),
    ("", "stderr = 7", "t.toml: engine #1.stderr",
     "expected a string (in quotes), got the number 7"),
    ("pdnout = { file = 3 }", "", "t.toml: pdnout.file",
     "expected a string (in quotes), got the number 3"),
    ("", 'restart = "yes"', "t.toml: engine #1.restart",
     "expected true or false, got the string 'yes'"),
    ("", "restart = 1", "t.toml: engine #1.restart", "expected true or false, got the number 1"),
    ('games = "10"', "", "t.toml: games", "expected a whole number, got the string '10'"),
    ("[each]\nrestart = 1", "", "t.toml: each.restart", "expected true or false"),
    ("log = { file = true }", "", "t.toml: log.file", "expected a string"),
    ("concurrency = true", "", "t.toml: concurrency", "expected a whole number, got true"),
    ('"move-timeout" = "5"', "", "t.toml: move-timeout", "expected a number"),
])
def test_a_value_of_the_wrong_type_is_one_line_naming_the_key(
        tmp_path: Path, top: str, engine_extra: str, where: str, message: str) -> None:
    tail = "" if top.startswith("[each]") else '[each]\ntc = "30+0.5"\n'
    (tmp_path / "t.toml").write_text(f"{top}\n{tail}{engines(engine_extra)}")
    done = subprocess.run([*GUTI, "tournament", "t.toml", "-games", "2"] if "games" not in top
                          else [*GUTI, "tournament", "t.toml"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert f"{where}: {message}" in done.stderr, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.toml"]  # nothing written


def test_the_same_keys_with_their_types_run(tmp_path: Path) -> None:
    (tmp_path / "t.toml").write_text(
        'games = 2\nreport = "r.html"\npdnout = { file = "g.pdn", nodes = true }\n'
        '"move-timeout" = 5\n[each]\ntc = "30+0.5"\nrestart = true\n'
        + engines('stderr = "e.err"'))
    done = subprocess.run([*GUTI, "tournament", "t.toml", "-db", "t.db"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert {"r.html", "g.pdn", "e.err"} <= {p.name for p in tmp_path.iterdir()}


@pytest.mark.parametrize("key", ["iterations", "pairs"])
def test_a_tuning_runs_counts_are_whole_numbers_not_strings(tmp_path: Path, key: str) -> None:
    (tmp_path / "t.toml").write_text(f'{key} = "2"\n[param]\nX = "1,0,2,1,0.1"\n'
                                     f'[[engine]]\ncmd = "true"\n')
    done = subprocess.run([*GUTI, "tune", "t.toml"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr == f"guti tune: t.toml: {key}: expected a whole number, got the " \
                          "string '2'\n"
