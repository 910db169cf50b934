"""``guti check`` through the real command: it passes every good engine and names the fault
of every faulty one.

Each run is a real ``guti check -- ENGINE`` subprocess. The runs are slow-ish
(a couple of seconds each, mostly engine start-up and the timed ``go`` items), so all of
them are started together from a module fixture on a small thread pool and each test
only looks at its own result.
"""

from __future__ import annotations

import functools
import re
import subprocess
import sys
from concurrent.futures import Future, ThreadPoolExecutor

import pytest

from guti.referee.tools import check_cases
from guti.rules import RulesError
from tests.conftest import BOT_NAMES, ENGINE_ARGV, GUTI, ROOT, argv_of_bot_or_reason

#: One worker runs this module: its module fixture (real runs) then happens once, not per worker.
pytestmark = pytest.mark.xdist_group("check")

FAULTY = str(ROOT / "tests" / "engines" / "faulty.py")
BUGGY = str(ROOT / "tests" / "engines" / "buggy_movegen.py")
RUN_TIMEOUT = 120.0

# mode -> (the item that must fail, a word its FAIL line must contain)
FAULTS: dict[str, tuple[str, str]] = {
    "crash": ("egara-guti: go movetime", "exit code 3"),
    "kill": ("egara-guti: go movetime", "SIGKILL"),
    "hang": ("egara-guti: go movetime", "nothing within"),
    "slow": ("egara-guti: go movetime", "bestmove within 200 ms"),
    "illegal": ("egara-guti: go movetime", "saw illegal move"),
    "garbage": ("egara-guti: go movetime", "malformed move '@@garbage@@'"),
    "none": ("egara-guti: go movetime", "saw bestmove none"),
    "chatter": ("egara-guti: go movetime", "thinking very hard"),
    "fork-crash": ("egara-guti: go movetime", "exit code 3"),
    "setsid-crash": ("egara-guti: go movetime", "exit code 3"),
    "longline": ("egara-guti: go movetime", "longer than"),
    "close-stdout": ("egara-guti: go movetime", "closed its output"),
    "ignore-quit": ("quit", "still running"),
    "fork": ("quit", "no process of the engine left"),
    "exit-now": ("handshake", "exit code 0"),
    "startup-crash": ("handshake", "deliberate start-up crash"),
    "no-ugiok": ("handshake", "ugiok within 2 s"),
}


def _good_engines(request: pytest.FixtureRequest) -> dict[str, list[str] | str]:
    """name -> argv, or a reason to skip."""
    engines: dict[str, list[str] | str] = {"reference": ENGINE_ARGV}
    for name in BOT_NAMES:
        engines[name] = argv_of_bot_or_reason(request, name)
    return engines


def _run(argv: list[str], game: str | None = None) -> subprocess.CompletedProcess[str]:
    opts = ["--game", game] if game else []
    return subprocess.run(
        [*GUTI, "check", *opts, "--", *argv], capture_output=True, text=True,
        timeout=RUN_TIMEOUT, cwd=ROOT,
    )


@pytest.fixture(scope="module")
def runs(request: pytest.FixtureRequest) -> dict[str, Future | str | functools.partial]:
    pool = ThreadPoolExecutor(max_workers=4)
    futures: dict[str, Future | str | functools.partial] = {}
    # Each run starts when a test first asks for it (a tier runs only its own); the
    # slowest (those that wait for a timeout) are in the slow tier.
    for mode in (*FAULTS, "good"):
        # the good one with a pool of four idle search threads, for the resources line
        threads = ["--threads", "5"] if mode == "good" else []
        futures[f"faulty-{mode}"] = functools.partial(
            pool.submit, _run, [sys.executable, FAULTY, "--mode", mode, "--seed", "1", *threads],
            "egara-guti")
    futures["buggy"] = pool.submit(_run, [sys.executable, BUGGY], "egara-guti")
    futures["long-name"] = functools.partial(
        pool.submit, _run, [sys.executable, FAULTY, "--mode", "illegal", "--name", "N" * 100_000],
        "egara-guti")
    # The good engines' runs (every game, every item) start when a test asks for them: the
    # slow tier's (the fast tier checks the reference engine in one game, in
    # test_check_first_hour.py).
    for name, argv in _good_engines(request).items():
        futures[name] = argv if isinstance(argv, str) else functools.partial(pool.submit, _run,
                                                                             argv)
    yield futures
    pool.shutdown(wait=True)


def _result(runs, name: str) -> tuple[int, list[str]]:
    fut = runs[name]
    if isinstance(fut, str):
        pytest.skip(fut)
    if isinstance(fut, functools.partial):
        fut = runs[name] = fut()
    res = fut.result(timeout=RUN_TIMEOUT)
    assert "Traceback" not in res.stdout + res.stderr, res.stdout + res.stderr
    return res.returncode, res.stdout.splitlines()


@pytest.mark.parametrize("name", [
    pytest.param(name, marks=pytest.mark.slow)
    for name in ("reference", "python-random", "python-greedy", "js", "c", "java")])
def test_check_passes_good_engines(runs, name):
    code, lines = _result(runs, name)
    failed = [line for line in lines if line.startswith("FAIL")]
    assert code == 0 and not failed, "\n".join(lines)
    # The check really exercised the protocol: a sample of items from every group passed.
    for item in (
        "PASS handshake", "PASS isready", "PASS egara-guti: go movetime",
        "PASS egara-guti: go infinite, isready, stop", "PASS egara-guti: position fen with moves",
        "PASS egara-guti: query, repetition", "PASS egara-guti: query, fifty plies (by a move)",
        "PASS egara-guti: bad input, position kept", "PASS pretwa: query, three or fewer",
        "PASS pretwa: go on a finished game (three or fewer)", "PASS quit",
    ):
        assert any(line.startswith(item + " (") for line in lines), (
            f"{item} missing:\n" + "\n".join(lines))
    perft = [line for line in lines if "go perft 7, start" in line]
    handshake = next(line for line in lines if line.startswith("PASS handshake ("))
    declared = handshake.split("; games ")[1].split(";")[0].split(", ")
    assert len(declared) in (2, 7)  # the Java and JS bots play two games, the others all seven
    assert len(perft) == len(declared), perft
    assert all(line.startswith(("PASS", "SKIP")) for line in perft), perft
    assert lines[-1].startswith("guti check:") and " 0 failed" in lines[-1]


def test_check_shows_an_engines_huge_answers_by_their_start(runs):
    """An ``id name`` of 100,000 characters, and FAIL lines quoting the engine: every
    report line stays short."""
    code, lines = _result(runs, "long-name")
    assert code == 1 and any(line.startswith("FAIL") for line in lines), "\n".join(lines)
    handshake = next(line for line in lines if line.startswith("PASS handshake ("))
    assert "id name NNN" in handshake
    assert max(map(len, lines)) < 2000, [len(line) for line in lines]


#: Faults whose check waits for a timeout or a grace period to pass: the slow tier's.
WAITING_FAULTS = {"hang", "chatter", "no-ugiok", "slow", "ignore-quit", "fork", "exit-now"}


@pytest.mark.parametrize("mode", [
    pytest.param(mode, marks=pytest.mark.slow) if mode in WAITING_FAULTS else mode
    for mode in sorted(FAULTS)])
def test_check_names_the_fault(runs, mode):
    item, word = FAULTS[mode]
    code, lines = _result(runs, f"faulty-{mode}")
    assert code == 1, "\n".join(lines)
    hits = [line for line in lines if line.startswith(f"FAIL {item}:")]
    assert hits, f"no FAIL {item}:\n" + "\n".join(lines)
    assert word in hits[0], hits[0]
    assert "does NOT conform" in lines[-1]


def test_the_same_items_pass_without_the_fault(runs):
    """The faulty engine in mode good passes the items the faults are pinned to, so each
    FAIL above is caused by its fault (it still fails elsewhere: no query, no real search)."""
    code, lines = _result(runs, "faulty-good")
    for item in {item for item, _ in FAULTS.values()}:
        assert any(line.startswith(f"PASS {item} (") for line in lines), (item, lines)
    assert code == 1


def test_a_query_the_engine_ignores_fails_at_the_readyok_sent_after_it(runs):
    """The faulty engine answers no ``query``: the ``readyok`` to the ``isready`` sent behind
    the first one tells, with no wait; the later query items are skipped."""
    _, lines = _result(runs, "faulty-good")
    queries = [line for line in lines if line.startswith(("FAIL egara-guti: query",
                                                          "SKIP egara-guti: query"))]
    assert queries[0].startswith("FAIL egara-guti: query, game on: expected 'response ...' "
                                 "to query gameover before the readyok to the isready sent "
                                 "after it, saw readyok before any response"), queries[0]
    assert len(queries) > 1 and all(line.startswith("SKIP") for line in queries[1:])


def test_check_finds_a_move_generator_bug(runs):
    code, lines = _result(runs, "buggy")
    assert code == 1
    start = [line for line in lines if "go perft 7, start" in line]
    assert start and start[0].startswith("FAIL"), lines
    assert "13-12: engine" in start[0], start[0]
    # the FEN shown is the one the perft ran on, not an earlier item's
    assert "[FEN bbbbb/bbb/bbb/1/www/www/wwwww w 0 1;" in start[0], start[0]
    assert any(line.startswith("PASS egara-guti: go perft 3, multi-jump") for line in lines)


def test_check_without_engine_is_a_usage_error():
    """One line and exit 2, as every command says a mistake (no usage block first)."""
    res = subprocess.run([*GUTI, "check"], capture_output=True, text=True, timeout=30)
    assert res.returncode == 2 and res.stderr.startswith("guti check: no engine command")
    assert res.stderr.count("\n") == 1, res.stderr


def test_an_empty_engine_command_is_said_so():
    res = subprocess.run([*GUTI, "check", "--", ""], capture_output=True, text=True, timeout=30)
    assert res.returncode == 2, res.stderr
    assert res.stderr == "guti check: the engine: cannot start '': the engine's command is empty\n"


def test_check_cases_are_verified_by_the_rules():
    for game in ("egara-guti", "pretwa"):
        cases = check_cases.cases_for(game)
        assert cases is not None and cases.game == game
    broken = check_cases._egara()
    wrong = check_cases.PositionCase("mislabelled", None, ("14-12",), "repetition")
    with pytest.raises(RulesError, match="mislabelled"):
        check_cases._verify(
            check_cases.GameCases(**{**broken.__dict__, "queries": (wrong,)})
        )


def test_check_reports_the_engine_s_peak_memory_and_threads(runs):
    # five threads from its start (a pool of four idle search threads): seen mid-search
    _status, lines = _result(runs, "faulty-good")
    line = next(x for x in lines if x.startswith("PASS resources during its searches"))
    # the memory is written as -show-resources writes it: MiB with one decimal
    match = re.search(r"peak memory (\d+\.\d) MiB .*, at most (\d+) threads in 1 process "
                      r"during its searches", line)
    assert match is not None, line
    assert float(match[1]) > 1 and int(match[2]) == 5, line


BAD_OPTIONS = '''
import sys
for line in sys.stdin:
    words = line.split()
    if words[:1] == ["ugi"]:
        print("id name bad options\\nid author guti tests\\n"
              "option name Hash type spin default 16 min 1 max 1024\\n"  # a sound one
              "option name A type spin default 99 min 5 max 1\\n"
              "option name B type combo default x var a var b\\n"
              "option name C type check default maybe\\n"
              "option name D type frob\\nugiok", flush=True)
    elif words[:1] == ["isready"]:  # then gone: the rest of the check is skipped at once
        print("readyok", flush=True)
        break
'''


def test_option_declarations_are_checked_by_their_content(tmp_path):
    """Lines that parse but declare what protocol.md's syntax does not allow: a spin's
    default out of its range, a combo's default not among its values, a check's default
    neither true nor false, a type of no kind. Each is named; the sound one is not."""
    engine = tmp_path / "bad_options.py"
    engine.write_text(BAD_OPTIONS)
    done = subprocess.run([*GUTI, "check", "--", sys.executable, str(engine)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    [line] = [ln for ln in done.stdout.splitlines() if ln.startswith("FAIL handshake")]
    for why in ("A: a spin's default 99 is not within 5..1",
                "B: a combo's default 'x' is not one of its values",
                "C: a check's default 'maybe' is not true or false", "and 1 more"):
        assert why in line, line
    assert "Hash" not in line.split("[")[0], line


def test_refusals_are_seen_however_many_lines_come_before_the_readyok():
    """An engine that says a hundred lines before every ``readyok``: its ``info string
    error`` and ``unknown command`` answers to bad input are still seen."""
    quirky = str(ROOT / "tests" / "engines" / "quirky.py")
    done = _run([sys.executable, quirky, "--quirk", "chatty-isready"], "pretwa")
    assert done.returncode == 0, done.stdout
    assert "0 failed, 0 warnings" in done.stdout.splitlines()[-1], done.stdout


def _declaring(tmp_path, *options: str) -> list[str]:
    """An engine that declares ``options`` and ends after its first ``readyok``."""
    lines = "\\n".join(f"option name {option}" for option in options)
    engine = tmp_path / f"declares_{len(list(tmp_path.iterdir()))}.py"
    engine.write_text(BAD_OPTIONS.replace(BAD_OPTIONS[BAD_OPTIONS.index('"option name Hash'):
                                                      BAD_OPTIONS.index('ugiok", flush')],
                                          f'"{lines}\\n'))
    return [sys.executable, str(engine)]


def test_each_option_is_declared_once_and_a_64_bit_spin_bound_is_a_number(tmp_path):
    big = "Big type spin default 1 min 0 max 9223372036854775807"
    twice = _run(_declaring(tmp_path, big, "Hash type spin default 16 min 1 max 64",
                            "hash type check default false"))
    [line] = [ln for ln in twice.stdout.splitlines() if ln.startswith("FAIL handshake")]
    assert "expected each option declared once (names read in any case), saw declared " \
           "again: 'hash'" in line, line
    once = _run(_declaring(tmp_path, big, "Hash type spin default 16 min 1 max 64"))
    assert any(ln.startswith("PASS handshake") for ln in once.stdout.splitlines()), once.stdout


def test_a_game_given_twice_is_checked_once():
    done = subprocess.run([*GUTI, "check", "--game", "egara-guti", "--game", "Egara-Guti", "--",
                           sys.executable, FAULTY, "--mode", "good"],
                          capture_output=True, text=True, timeout=RUN_TIMEOUT, cwd=ROOT)
    items = [line for line in done.stdout.splitlines() if "egara-guti: go movetime" in line]
    assert len(items) == 1, done.stdout


UNENDED_BESTMOVE = '''
import sys
for line in sys.stdin:
    word = line.split()[:1]
    if word == ["ugi"]:
        print("id name unended\\nid author tests\\nugiok", flush=True)
    elif word == ["isready"]:
        print("readyok", flush=True)
    elif word == ["go"]:
        sys.stdout.write("bestmove 16-12")
        sys.stdout.flush()
    elif word == ["quit"]:
        break
'''


def test_an_ugiok_without_its_newline_is_shown_in_the_fail_line(tmp_path):
    engine = tmp_path / "unended.py"
    engine.write_text(UNENDED_BESTMOVE.replace('print("id name unended\\nid author tests\\nugiok", '
                                               'flush=True)',
                                               'sys.stdout.write("id name u\\nugiok"); '
                                               'sys.stdout.flush()'))
    done = subprocess.run([*GUTI, "check", "--", sys.executable, str(engine)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    [line] = [ln for ln in done.stdout.splitlines() if ln.startswith("FAIL handshake")]
    assert '; its last output, "ugiok", has no newline after it' in line, line


def test_a_bestmove_without_its_newline_is_shown_in_the_fail_line(tmp_path):
    """The commonest first-hour bug: the reply written and flushed, its newline forgotten.
    The FAIL line quotes what the engine left unended."""
    engine = tmp_path / "unended.py"
    engine.write_text(UNENDED_BESTMOVE)
    done = subprocess.run([*GUTI, "check", "--", sys.executable, str(engine)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    [line] = [ln for ln in done.stdout.splitlines() if "go movetime" in ln and "FAIL" in ln]
    assert '; its last output, "bestmove 16-12", has no newline after it' in line, line
