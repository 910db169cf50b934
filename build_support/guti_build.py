"""guti's build backend: setuptools, plus the optional compiled rules core.

Why a backend of our own: the compiled build (``GUTI_COMPILE=1 pip install .``) compiles
the rules core's hot modules to C with mypyc, which needs mypy in pip's isolated build
environment. Only a backend can ask for it, and only when compiling, so that every other
install (the README's, CI's, an editable one) stays as light as before. Everything else is
setuptools' own backend, unchanged.

The modules compiled are listed here, once: ``setup.py`` compiles them and the test of the
compiled build (tests/test_compiled.py) checks that each of them was.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F403 (the backend's whole interface)

#: Set to 1 to compile; anything else (or unset) builds the pure-Python package.
COMPILE_VARIABLE = "GUTI_COMPILE"

#: The rules core's hot path: move generation, the board, moves, line patterns, perft.
#: The data modules (games, geometry, fen, result) stay Python: their frozen dataclasses
#: pickle as they always have, and nothing in them runs per move. Then the referee's ply:
#: the engine's pipes, the UGI client, the game loop, its clocks and the judge (the game
#: record, which is pickled between processes, stays Python).
COMPILED_MODULES = (
    "engine/rules/movegen.py",
    "engine/rules/board.py",
    "engine/rules/move.py",
    "engine/rules/patterns.py",
    "engine/rules/perft_tree.py",
    "engine/rules/fen.py",
    "referee/process/engine_process.py",
    "referee/ugi/client.py",
    "referee/game/runner.py",
    "referee/game/timecontrol.py",
    "referee/game/judge.py",
)

#: What compiling needs besides setuptools (mypyc ships inside mypy).
COMPILER_REQUIRES = ["mypy>=1.10"]


def compiling() -> bool:
    """Whether this build compiles (``GUTI_COMPILE=1``)."""
    return os.environ.get(COMPILE_VARIABLE, "") == "1"


def compiled_module_names() -> list[str]:
    """The listed modules as import names (``engine.rules.movegen``)."""
    return [path.removesuffix(".py").replace("/", ".") for path in COMPILED_MODULES]


def get_requires_for_build_wheel(config_settings: dict[str, Any] | None = None) -> list[str]:
    """setuptools' requirements, plus mypy when compiling. setuptools finds its own by
    running setup.py, which must not reach for mypyc before it is installed."""
    if not compiling():
        return _setuptools.get_requires_for_build_wheel(config_settings)
    os.environ[COMPILE_VARIABLE] = "0"
    try:
        return _setuptools.get_requires_for_build_wheel(config_settings) + COMPILER_REQUIRES
    finally:
        os.environ[COMPILE_VARIABLE] = "1"


def _pure(hook: Callable[..., Any]) -> Callable[..., Any]:
    """An editable install is never compiled: a compiled module beside its source would
    shadow every later edit of that source. Each of pip's calls into the backend runs in
    a process of its own, so each editable hook drops the variable itself."""

    def pure_hook(*args: Any, **kwargs: Any) -> Any:
        os.environ.pop(COMPILE_VARIABLE, None)
        return hook(*args, **kwargs)

    return pure_hook


get_requires_for_build_editable = _pure(_setuptools.get_requires_for_build_editable)
prepare_metadata_for_build_editable = _pure(_setuptools.prepare_metadata_for_build_editable)
build_editable = _pure(_setuptools.build_editable)


#: What a copy of the checkout for ``compile_copy`` leaves out (history, environments,
#: builds, caches, stores).
_NOT_COPIED = (".git", ".venv", "build", "out", "__pycache__", "*.so", "*.db", "*.egg-info",
               ".pytest_cache", ".ruff_cache", ".hypothesis", ".mypy_cache")


def compile_copy(source: str, destination: str) -> str:
    """Copy the checkout ``source`` to ``destination`` and compile the listed modules in
    place there; returns ``destination``. Why a copy: the tests and benchmarks set the
    compiled build beside the Python one, and a module compiled in the checkout itself
    would shadow its source. Raises RuntimeError with the compiler's last words if the
    build fails."""
    import shutil
    import subprocess
    import sys

    shutil.copytree(source, destination, ignore=shutil.ignore_patterns(*_NOT_COPIED))
    build = subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"],
                           cwd=destination, env=dict(os.environ, **{COMPILE_VARIABLE: "1"}),
                           capture_output=True, text=True)
    if build.returncode != 0:
        raise RuntimeError("compiled build failed:\n" + (build.stdout + build.stderr)[-3000:])
    return destination
