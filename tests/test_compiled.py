"""The compiled build (``GUTI_COMPILE=1``) plays by the same rules and referees the same
way as the Python one.

Why: the compiled build runs the same source as C (mypyc), and mypyc checks types at run
time where Python does not, so a module can compile and still behave differently. These
tests build the modules listed in build_support/guti_build.py into a copy of this
checkout, check that each one really is compiled, and run the rules, perft (against the
reference figures), cousin-game, engine-search and referee suites on that copy, and two
whole tournaments with it. They also check
the build backend's two promises: mypy is asked for only when compiling, and an editable
install is never compiled.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from engine.rules import Board
from tests.conftest import ROOT

#: The suites run again on the compiled copy: the rules (with the perft reference
#: figures), the perft walk, the cousin games and the reference engine's search; then the
#: referee's ply: the UGI client over a fake transport, real engines' output (floods,
#: long lines, cancelled waits), every engine fault, closed pipes, the clocks and the
#: judge, and ``guti check``.
SUITES = ["tests/test_rules.py", "tests/test_perft_walk.py", "tests/test_cousins.py",
          "tests/test_engine_search.py", "tests/test_ugi_client.py",
          "tests/test_engine_output.py", "tests/test_referee_faults.py",
          "tests/test_closed_stdout.py", "tests/test_referee_units.py", "tests/test_check.py"]


def _load_backend() -> ModuleType:
    """build_support/guti_build.py, the build backend (not a package of guti's)."""
    spec = importlib.util.spec_from_file_location(
        "guti_build", ROOT / "build_support" / "guti_build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BACKEND = _load_backend()


@pytest.fixture(scope="module")
def compiled_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of this checkout with the listed modules compiled in place."""
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler: cannot build the compiled rules core")
    copy = tmp_path_factory.mktemp("compiled") / "guti"
    return Path(BACKEND.compile_copy(str(ROOT), str(copy)))


def _module_files(copy: Path) -> dict[str, str]:
    """Where each listed module is loaded from, in a fresh interpreter in ``copy``."""
    names = BACKEND.compiled_module_names()
    code = ("import importlib, sys\n"
            f"for name in {names!r}:\n"
            "    print(name, importlib.import_module(name).__file__)\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=copy, capture_output=True,
                         text=True, timeout=120, check=True).stdout
    return dict(line.split(" ", 1) for line in out.splitlines())


def test_every_listed_module_is_compiled(compiled_copy: Path) -> None:
    files = _module_files(compiled_copy)
    assert len(files) == len(BACKEND.COMPILED_MODULES)
    for name, path in files.items():
        assert path.endswith(".so") and path.startswith(str(compiled_copy)), (name, path)


def test_the_suites_pass_on_the_compiled_build(compiled_copy: Path) -> None:
    """The suites run in one interpreter that has imported the compiled modules first, so
    every test in them uses the compiled code (checked again just before they start)."""
    names = BACKEND.compiled_module_names()
    code = ("import importlib, sys, pytest\n"
            f"for name in {names!r}:\n"
            "    assert importlib.import_module(name).__file__.endswith('.so'), name\n"
            f"sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', *{SUITES!r}]))\n")
    run = subprocess.run([sys.executable, "-c", code], cwd=compiled_copy, capture_output=True,
                         text=True, timeout=1200)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert " passed" in run.stdout and " failed" not in run.stdout


@pytest.mark.parametrize("shape", [["-concurrency", "1", "-use-affinity", "0"],
                                   ["-concurrency", "2", "-referees", "2"]],
                         ids=["in this process, pinned", "in referee processes"])
def test_a_tournament_runs_on_the_compiled_build(compiled_copy: Path, tmp_path: Path,
                                                  shape: list[str]) -> None:
    """A whole tournament in an interpreter that imported the compiled modules (the CLI
    tests run the installed, pure-Python guti): the executor, the engine pools and the
    referee processes around the compiled ply. Every game is stored, and replays legally."""
    db = tmp_path / "t.db"
    engine = [f"cmd={sys.executable}", "args=-m engine"]
    argv = ["-engine", *engine, "name=a", "-engine", *engine,
            "name=b", "-each", "tc=2+0.05", "-game", "pretwa", "-games", "6", "-maxmoves",
            "30", "-db", str(db), "-quiet", *shape]
    names = BACKEND.compiled_module_names()
    code = ("import importlib, sys\n"
            f"for name in {names!r}:\n"
            "    assert importlib.import_module(name).__file__.endswith('.so'), name\n"
            "from referee.cli.tournament import main_tournament\n"
            f"sys.exit(main_tournament({argv!r}))\n")
    run = subprocess.run([sys.executable, "-c", code], cwd=compiled_copy, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    with sqlite3.connect(db) as conn:
        games = conn.execute("SELECT game, start_fen, moves FROM games").fetchall()
    assert len(games) == 6
    for game, start_fen, moves in games:
        board = Board.from_fen(game, start_fen) if start_fen else Board(game)
        for move in str(moves).split():
            board.push_str(move)


def _requires(hook: str, compile_value: str | None) -> list[str]:
    """The backend's answer to ``hook``, asked in a process of its own (as pip asks)."""
    env = {k: v for k, v in os.environ.items() if k != "GUTI_COMPILE"}
    if compile_value is not None:
        env["GUTI_COMPILE"] = compile_value
    code = ("import sys; sys.path.insert(0, 'build_support'); import guti_build\n"
            f"print(repr(guti_build.{hook}()))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=120, check=True).stdout
    return list(ast.literal_eval(out.strip().splitlines()[-1]))


def test_mypy_is_asked_for_only_when_compiling() -> None:
    compiler = BACKEND.COMPILER_REQUIRES
    assert all(req in _requires("get_requires_for_build_wheel", "1") for req in compiler)
    for value in (None, "0", ""):
        assert not set(compiler) & set(_requires("get_requires_for_build_wheel", value))


def test_an_editable_install_is_never_compiled() -> None:
    """``GUTI_COMPILE=1 pip install -e .`` would otherwise build modules into the source
    tree, where they would shadow every later edit of their source. Each editable hook
    must hand setuptools an environment without the variable (setuptools itself is
    replaced here by a recorder of what it would see)."""
    compiler = BACKEND.COMPILER_REQUIRES
    assert not set(compiler) & set(_requires("get_requires_for_build_editable", "1"))
    hooks = ["get_requires_for_build_editable", "prepare_metadata_for_build_editable",
             "build_editable"]
    code = ("import os, sys; sys.path.insert(0, 'build_support'); import guti_build\n"
            f"for hook in {hooks!r}:\n"
            "    setattr(guti_build._setuptools, hook,\n"
            "            lambda *a, **k: os.environ.get('GUTI_COMPILE', 'unset'))\n"
            "    guti_build = __import__('importlib').reload(guti_build)\n"
            "    os.environ['GUTI_COMPILE'] = '1'\n"
            "    print(hook, getattr(guti_build, hook)('wheels'))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, timeout=120, check=True).stdout
    assert out.split() == [word for hook in hooks for word in (hook, "unset")]
