"""``guti check`` as a stranger's engine meets it: stdout
debugging text, a crash on invalid UTF-8, an engine without guti's extensions, one that
refuses ``movestogo``, and FAIL lines that carry the position and the engine's own words.

Each run is a real ``guti check`` subprocess on the reference engine wrapped by
``tests/engines/quirky.py``; all are started together on a small thread pool."""

from __future__ import annotations

import functools
import re
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor

import pytest

from guti.referee.tools.check_cases import cases_for
from guti.rules import Board
from tests.conftest import ENGINE_ARGV, GUTI, ROOT

#: One worker runs this module: its module fixture (real runs) then happens once, not per worker.
pytestmark = pytest.mark.xdist_group("check_first_hour")

QUIRKY = str(ROOT / "tests" / "engines" / "quirky.py")
QUIRKS = ("stdout-debug", "strict-utf8", "no-extensions", "reject-movestogo", "reject-moves",
          "padded", "double-bestmove")


def _run(argv: list[str]) -> tuple[int, list[str]]:
    done = subprocess.run([*GUTI, "check", "--game", "egara-guti", "--", *argv],
                          capture_output=True, text=True, timeout=180, cwd=ROOT)
    return done.returncode, done.stdout.splitlines()


#: Runs only the slow tier's tests ask for: started when first asked for, not with the rest.
SLOW_TIER_QUIRKS = ("reject-movestogo",)


@pytest.fixture(scope="module")
def runs() -> Iterator[dict[str, Future | functools.partial]]:
    pool = ThreadPoolExecutor(max_workers=3)
    futures: dict[str, Future | functools.partial] = {}
    for quirk in QUIRKS:
        start = functools.partial(pool.submit, _run, [sys.executable, QUIRKY, "--quirk", quirk])
        futures[quirk] = start if quirk in SLOW_TIER_QUIRKS else start()
    futures["reference"] = pool.submit(_run, ENGINE_ARGV)
    # its 12th isready (during the query items) answered 2.5 s late, every other at once
    futures["late-readyok"] = pool.submit(
        _run, [sys.executable, QUIRKY, "--quirk", "late-readyok", "--at", "12"])
    yield futures
    pool.shutdown(wait=True)


def result(runs: dict[str, Future | functools.partial], name: str) -> tuple[int, list[str]]:
    run = runs[name]
    if isinstance(run, functools.partial):
        run = runs[name] = run()
    return run.result()


def test_the_reference_engine_meets_ugi_and_the_extensions(runs) -> None:
    code, lines = result(runs, "reference")
    assert code == 0, lines
    assert lines[-1].endswith("0 failed, 0 warnings, 0 skipped: the engine conforms to UGI "
                              "and to guti's extensions"), lines[-1]
    for item in ("stdout: protocol lines only", "egara-guti: go with movestogo",
                 "egara-guti: bad input, invalid UTF-8 still answers isready",
                 "egara-guti: d (guti extension)"):
        assert any(line.startswith(f"PASS {item}") for line in lines), item


def test_debugging_text_on_stdout_is_a_warning(runs) -> None:
    code, lines = result(runs, "stdout-debug")
    warn = [line for line in lines if line.startswith("WARN stdout: protocol lines only")]
    assert warn and "'debug: got ugi'" in warn[0], lines
    assert code == 0 and "conforms to UGI, not to all of guti's extensions" in lines[-1]


def test_an_engine_that_dies_on_invalid_utf8_fails(runs) -> None:
    code, lines = result(runs, "strict-utf8")
    fail = [line for line in lines
            if line.startswith("FAIL egara-guti: bad input, invalid UTF-8 still answers isready")]
    assert fail and "exit code 1" in fail[0] and "not UTF-8" in fail[0], lines
    assert code == 1 and "does NOT conform to UGI" in lines[-1]


def test_an_engine_without_guti_extensions_still_conforms_to_ugi(runs) -> None:
    code, lines = result(runs, "no-extensions")
    assert code == 0, lines
    assert not [line for line in lines if line.startswith("FAIL")], lines
    warned = {line.split(":")[1].strip() for line in lines if line.startswith("WARN")}
    assert {"d (guti extension)", "bad input, illegal move (guti's wording)",
            "bad input, bad FEN (guti's wording)"} <= warned, warned
    assert any(line.startswith("SKIP egara-guti: go perft:") for line in lines)
    assert "conforms to UGI, not to all of guti's extensions" in lines[-1]


@pytest.mark.slow
def test_an_engine_that_refuses_movestogo_fails(runs) -> None:
    code, lines = result(runs, "reject-movestogo")
    fail = [line for line in lines if line.startswith("FAIL egara-guti: go with movestogo")]
    assert fail and "unknown parameter movestogo" in fail[0], lines
    assert code == 1


def test_every_fail_line_shows_the_position_and_the_engines_error(runs) -> None:
    code, lines = result(runs, "reject-moves")
    fails = [line for line in lines if line.startswith("FAIL")]
    assert code == 1 and fails, lines
    assert all(re.search(r"\[(FEN \S|no position sent yet)", line) for line in fails), fails
    movetime = [line for line in fails if line.startswith("FAIL egara-guti: go movetime")]
    cases = cases_for("egara-guti")
    assert cases is not None
    fen = cases.startpos_moves.board("egara-guti").fen()
    assert fen != Board("egara-guti").fen()
    assert movetime and f"[FEN {fen};" in movetime[0], movetime
    assert ("the engine said: 'info string error position: moves are not supported here'"
            in movetime[0])


def test_blanks_around_an_engines_lines_are_ignored_as_the_referee_ignores_them(runs) -> None:
    """protocol.md 5.1: leading and trailing blanks are ignored, in error reports and
    perft lines too."""
    code, lines = result(runs, "padded")
    assert code == 0, lines
    assert lines[-1].endswith("0 failed, 0 warnings, 0 skipped: the engine conforms to UGI "
                              "and to guti's extensions"), lines


def test_a_second_bestmove_to_one_go_is_not_read_as_the_answer_to_the_next(runs) -> None:
    """As in a game, what the engine said before a ``go`` or a ``stop`` cannot answer it."""
    code, lines = result(runs, "double-bestmove")
    assert code == 0, [line for line in lines if not line.startswith("PASS")]
    assert " 0 failed" in lines[-1], lines[-1]


def test_one_late_readyok_fails_its_own_item_and_no_other(runs) -> None:
    """The late ``readyok`` is read as the answer it is, not as the answer to the next
    ``isready``: the check is in step again after the one FAIL."""
    code, lines = result(runs, "late-readyok")
    not_passed = [line for line in lines[:-1] if not line.startswith("PASS")]
    assert code == 1 and len(not_passed) == 1, not_passed
    assert not_passed[0].startswith("FAIL egara-guti: query") and "nothing within 2 s" in \
        not_passed[0], not_passed
