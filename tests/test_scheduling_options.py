"""fastchess's scheduling options through real ``guti match`` and ``guti tournament`` runs:
``-noswap``, ``-reverse``, ``-seeds``, ``-openings ... start=N``, ``-wait`` and
``-use-affinity``, on the command line and in a TOML file.

Colours and openings are read back from the PDN file (guti's PDN reader), game counts
from the database, ``-wait`` from events (a run stopped once its first game is written
never began the second: no wall-clock threshold), and the CPU pinning from the engines
themselves: ``tests/engines/cpu_probe.py`` reports its own
``/proc/PID/status`` ``Cpus_allowed_list`` at every move.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import shlex
import signal
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from guti.rules import Board
from tests.conftest import GUTI, ROOT, parse_pdn, wait_for

FAULTY = ROOT / "tests" / "engines" / "faulty.py"
PROBE = ROOT / "tests" / "engines" / "cpu_probe.py"
PY = sys.executable
#: The three first moves of Egara-guti, each an opening of one ply (a book of three).
FIRST_MOVES = [str(m) for m in Board("egara-guti").legal_moves]


def engine(name: str, script: Path = FAULTY, *extra: str) -> list[str]:
    return ["-engine", f"cmd={PY}", f"args={shlex.join([str(script), *extra])}", f"name={name}"]


def guti(*args: str, cwd: Path, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*GUTI, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "PYTHONPATH": str(ROOT)})


def whites(pdn: Path) -> list[str]:
    """White's name of every game, in game order (``Round`` of a match, else file order)."""
    return [g.tags["White"] for g in parse_pdn(pdn.read_text())]


def book(tmp_path: Path) -> Path:
    path = tmp_path / "book.txt"
    path.write_text("".join(f"{move}\n" for move in FIRST_MOVES))
    return path


# --------------------------------------------------------------------------- colours


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        ([], ["A", "B", "A", "B"]),
        (["-reverse"], ["B", "A", "B", "A"]),
        (["-noswap"], ["A", "A", "A", "A"]),
        (["-noswap", "-reverse"], ["B", "B", "B", "B"]),
    ],
)
def test_match_colours_follow_noswap_and_reverse(tmp_path, flags, expected):
    done = guti("match", *engine("A"), *engine("B"), "-each", "tc=5+0.05", "-games", "4",
                "-pdnout", "out.pdn", *flags, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    games = parse_pdn((tmp_path / "out.pdn").read_text())
    assert [g.tags["Round"] for g in games] == ["1", "2", "3", "4"]
    assert [g.tags["White"] for g in games] == expected
    assert [g.tags["Black"] for g in games] == [{"A": "B", "B": "A"}[w] for w in expected]


def _colours_by_game(db: Path) -> dict[int, tuple[str, str]]:
    with sqlite3.connect(db) as conn:
        return {gid: (w, b) for gid, w, b in conn.execute("SELECT game_id, white, black FROM games")}


def test_tournament_reverse_swaps_every_game_and_noswap_keeps_the_first_engine_white(tmp_path):
    players = [*engine("A"), *engine("B"), *engine("C")]
    common = [*players, "-each", "tc=5+0.05", "-games", "2", "-rounds", "2", "-concurrency", "1",
              "-maxmoves", "3"]  # who is White is all this looks at: short games will do
    runs = {}
    for label, flags in (("plain", []), ("reverse", ["-reverse"]), ("noswap", ["-noswap"])):
        folder = tmp_path / label
        folder.mkdir()
        done = guti("tournament", *common, *flags, cwd=folder)
        assert done.returncode == 0, done.stderr
        runs[label] = _colours_by_game(folder / "guti.db")
    assert len(runs["plain"]) == 12
    # -reverse: the same games with colours swapped, game by game
    assert runs["reverse"] == {gid: (b, w) for gid, (w, b) in runs["plain"].items()}
    # -noswap: in each encounter, the engine listed first is White every time
    assert all(w < b for w, b in runs["noswap"].values()), runs["noswap"]
    assert Counter(frozenset(p) for p in runs["noswap"].values()) == Counter(
        frozenset(p) for p in runs["plain"].values())


# --------------------------------------------------------------------------- seeds


def _games_per_engine(db: Path) -> tuple[Counter, set[frozenset[str]]]:
    with sqlite3.connect(db) as conn:
        pairs = conn.execute("SELECT white, black FROM games").fetchall()
    played = Counter(name for pair in pairs for name in pair)
    return played, {frozenset(pair) for pair in pairs}


def test_gauntlet_seeds_play_everyone_after_them(tmp_path):
    done = guti("tournament", *engine("S1"), *engine("S2"), *engine("C"), *engine("D"),
                "-tournament", "gauntlet", "-seeds", "2", "-games", "2", "-each", "tc=5+0.05",
                cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    played, met = _games_per_engine(tmp_path / "guti.db")
    assert sum(played.values()) == 2 * 10  # (S1: S2 C D) + (S2: C D) = 5 encounters x 2
    assert played == Counter({"S1": 6, "S2": 6, "C": 4, "D": 4})
    assert frozenset({"C", "D"}) not in met
    assert "10 games" in done.stdout + done.stderr


# --------------------------------------------------------------------------- openings


def _first_moves(pdn: Path) -> list[str]:
    out = []
    for game in parse_pdn(pdn.read_text()):
        assert game.moves[0].comments == ["book"], game.movetext[:80]
        out.append(game.moves[0].text)
    return out


@pytest.mark.parametrize(("start", "expected"), [(1, [0, 0, 1, 1]), (2, [1, 1, 2, 2]),
                                                 (3, [2, 2, 0, 0])])
def test_match_openings_start_at_the_nth_opening_and_cycle(tmp_path, start, expected):
    done = guti("match", *engine("A"), *engine("B"), "-each", "tc=5+0.05", "-games", "4",
                "-openings", f"file={book(tmp_path)}", f"start={start}", "-pdnout", "out.pdn",
                cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert _first_moves(tmp_path / "out.pdn") == [FIRST_MOVES[i] for i in expected]


def test_openings_start_with_fen_lines(tmp_path):
    """FEN openings too: the second line's position is the first game's start."""
    fens = []
    for move in FIRST_MOVES[:2]:
        board = Board("egara-guti")
        board.push_str(move)
        fens.append(board.fen())
    (tmp_path / "fens.txt").write_text("".join(f"{fen}\n" for fen in fens))
    done = guti("match", *engine("A"), *engine("B"), "-each", "tc=5+0.05", "-games", "2",
                "-openings", "file=fens.txt", "start=2", "-pdnout", "out.pdn", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert [g.tags.get("FEN") for g in parse_pdn((tmp_path / "out.pdn").read_text())] == [fens[1]] * 2


# --------------------------------------------------------------------------- -wait

_NOTE = re.compile(r"^(\S+) \[referee\] # game (\d+): (.*)$")


def _game_spans(log: Path) -> dict[int, list[dt.datetime]]:
    """game number -> [start, end] from the traffic log's referee notes."""
    spans: dict[int, list[dt.datetime]] = {}
    for line in log.read_text().splitlines():
        found = _NOTE.match(line)
        if found:
            stamp, number, text = found.groups()
            spans.setdefault(int(number), []).append(dt.datetime.fromisoformat(stamp))
            assert ("(white)" in text) == (len(spans[int(number)]) == 1), line
    return spans


def assert_the_next_game_waits(argv: list[str], tmp_path: Path) -> None:
    """Run ``guti argv`` (three or more games, one at a time, an hour's ``-wait``, ``-log
    traffic.log`` and ``-pdnout out.pdn``): once the first game is written, the run is
    waiting before the second; a Ctrl-C then stops it there and the second game never
    began. Events only: the first game in the PDN file, guti still running, then what
    the log recorded (game 1 began and ended; no game 2)."""
    proc = subprocess.Popen([*GUTI, *argv], cwd=tmp_path, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)})
    pdn = tmp_path / "out.pdn"
    try:
        wait_for(lambda: proc.poll() is not None
                 or (pdn.exists() and len(parse_pdn(pdn.read_text())) >= 1),
                 "the first game written", 120)
        assert proc.poll() is None, f"the run did not wait: {proc.communicate()}"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, (out, err)
    assert sorted(_game_spans(tmp_path / "traffic.log")) == [1], "a second game began"
    assert len(parse_pdn(pdn.read_text())) == 1


def test_match_wait_holds_the_next_game(tmp_path):
    assert_the_next_game_waits(
        ["match", *engine("A"), *engine("B"), "-each", "tc=5+0.05", "-games", "3",
         "-wait", "3600000", "-log", "traffic.log", "-pdnout", "out.pdn"], tmp_path)


def test_tournament_toml_wait_holds_the_next_game(tmp_path):
    engines = "".join(f'[[engine]]\nname = "{name}"\ncmd = "{PY}"\nargs = ["{FAULTY}"]\n\n'
                      for name in ("A", "B"))
    (tmp_path / "t.toml").write_text(
        'games = 4\nconcurrency = 1\nwait = 3600000\npdnout = "out.pdn"\nlog = "traffic.log"\n'
        '[each]\ntc = "5+0.05"\n\n' + engines)
    assert_the_next_game_waits(["tournament", "t.toml"], tmp_path)


def test_tournament_toml_file_carries_every_option(tmp_path):
    """seeds, noswap, reverse and openings start from a TOML file, as on the command
    line: a gauntlet of two seeds, colours fixed and reversed (``wait``: the test above)."""
    book(tmp_path)
    engines = "".join(
        f'[[engine]]\nname = "{name}"\ncmd = "{{python}}"\nargs = ["{FAULTY}"]\n\n'
        for name in ("S1", "S2", "C"))
    (tmp_path / "t.toml").write_text(
        'tournament = "gauntlet"\nseeds = 2\nnoswap = true\nreverse = true\n'
        'games = 2\nconcurrency = 1\npdnout = "out.pdn"\nlog = "traffic.log"\n'
        '[each]\ntc = "5+0.05"\n[openings]\nfile = "book.txt"\nstart = 3\n\n' + engines)
    done = guti("tournament", "t.toml", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    games = parse_pdn((tmp_path / "out.pdn").read_text())
    pairs = [(g.tags["White"], g.tags["Black"]) for g in games]
    # encounters S1-S2, S1-C, S2-C (C never seeds); noswap + reverse: the later one is White
    assert sorted(pairs) == sorted([("S2", "S1")] * 2 + [("C", "S1")] * 2 + [("C", "S2")] * 2)
    assert {g.moves[0].text for g in games} == {FIRST_MOVES[2]}  # start = 3
    assert sorted(_game_spans(tmp_path / "traffic.log")) == [1, 2, 3, 4, 5, 6]


# --------------------------------------------------------------------------- affinity

_LOG_LINE = re.compile(r"^\S+ \[([^\]]+)\] (\S) (.*)$")
_START = re.compile(r"game (\d+): (#\d+ \S+) \(white\) vs (#\d+ \S+) \(black\)")


def _cpus_by_game(log: Path) -> tuple[dict[int, set[str]], list[tuple[int, int]]]:
    """game -> the ``Cpus_allowed_list`` values its two engines reported, and which games
    overlapped in time (by log order: one began before the other ended)."""
    game_of: dict[str, int] = {}  # "#2 P" -> the game that process is in
    reports: dict[int, set[str]] = {}
    running: set[int] = set()
    overlaps: list[tuple[int, int]] = []
    for line in log.read_text().splitlines():
        found = _LOG_LINE.match(line)
        if not found:
            continue
        who, direction, text = found.groups()
        if who == "referee":
            start = _START.match(text)
            number = int(text.split()[1].rstrip(":"))
            if start:
                overlaps += [(other, number) for other in running]
                running.add(number)
                game_of[start.group(2)] = game_of[start.group(3)] = number
            else:
                running.discard(number)
        elif direction == "<" and text.startswith("info string cpus "):
            reports.setdefault(game_of[who], set()).add(text.split()[-1])
    return reports, overlaps


def _probe_tournament(tmp_path: Path, *flags: str) -> tuple[dict[int, set[str]], list]:
    done = guti("tournament", *engine("P", PROBE), *engine("Q", PROBE), "-each", "tc=20+0.1",
                "-games", "4", "-concurrency", "2", "-log", "traffic.log", *flags, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return _cpus_by_game(tmp_path / "traffic.log")


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs Linux and two usable CPUs")
@pytest.mark.slow
def test_use_affinity_pins_each_concurrent_game_to_its_own_core(tmp_path):
    usable = sorted(os.sched_getaffinity(0))
    cpus = f"{usable[0]},{usable[1]}"
    reports, overlaps = _probe_tournament(tmp_path, "-use-affinity", cpus)
    assert sorted(reports) == [1, 2, 3, 4]
    for number, seen in reports.items():  # both engines of a game, every move: one core
        assert len(seen) == 1 and seen <= {str(usable[0]), str(usable[1])}, (number, seen)
    assert overlaps, "the two game slots never played at the same time"
    for a, b in overlaps:
        assert reports[a] != reports[b], f"games {a} and {b} ran at once on {reports[a]}"


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs Linux and two usable CPUs")
@pytest.mark.slow
def test_without_use_affinity_engines_may_run_anywhere(tmp_path):
    """The control: the same run without the option leaves every engine on every CPU."""
    reports, _ = _probe_tournament(tmp_path)
    with open("/proc/self/status") as fh:
        mine = next(line.split(":", 1)[1].strip() for line in fh if line.startswith("Cpus_allowed_list"))
    assert all(seen == {mine} for seen in reports.values()), reports


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs Linux and two usable CPUs")
def test_match_use_affinity_with_a_cpu_list(tmp_path):
    cpu = str(sorted(os.sched_getaffinity(0))[-1])
    # 12 plies a game (-maxmoves 6): the probe reports its CPUs at every one of them
    done = guti("match", *engine("P", PROBE), *engine("Q", PROBE), "-each", "tc=20+0.1",
                "-games", "2", "-maxmoves", "6", "-use-affinity", cpu, "-log", "traffic.log",
                cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    log = (tmp_path / "traffic.log").read_text().splitlines()
    assert sum("< info string cpus " in line for line in log) == 24
    seen = {line.rsplit(" ", 1)[1] for line in log if "< info string cpus " in line}
    assert seen == {cpu}
    # the referee itself, pinned with its one slot's engines (a ply never crosses cores)
    referee = {line.rsplit(" ", 1)[1] for line in log if "< info string referee " in line}
    assert referee == {cpu}


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs Linux and two usable CPUs")
@pytest.mark.slow
def test_without_use_affinity_the_referee_is_not_pinned(tmp_path):
    """The control of the test above: without the option guti runs where it was started."""
    done = guti("match", *engine("P", PROBE), *engine("Q", PROBE), "-each", "tc=20+0.1",
                "-games", "2", "-log", "traffic.log", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    with open("/proc/self/status") as fh:
        mine = next(line.split(":", 1)[1].strip() for line in fh if line.startswith("Cpus_allowed_list"))
    log = (tmp_path / "traffic.log").read_text().splitlines()
    assert {line.rsplit(" ", 1)[1] for line in log if "< info string referee " in line} == {mine}


# --------------------------------------------------------------------------- mistakes

PAIR = [*engine("A"), *engine("B"), "-each", "tc=1"]


@pytest.mark.parametrize(
    ("command", "argv", "needle"),
    [
        ("match", ["-wait", "-5"], "-wait: -5 is less than 0"),
        ("match", ["-wait", "soon"], "-wait: 'soon' is not a whole number"),
        ("match", ["-noswap", "yes"], "unexpected argument 'yes'"),
        ("match", ["-use-affinity", "0-x"], "-use-affinity 0-x: '0-x' is not a CPU number"),
        ("match", ["-use-affinity", "3-1"], "'3-1' is a range that goes down"),
        ("match", ["-use-affinity", "0,0"], "CPU 0 is listed twice"),
        ("match", ["-use-affinity", "4096"], "-use-affinity: CPU 4096 is not one guti may use"),
        ("match", ["-use-affinity", "0", "1"], "-use-affinity takes at most one value"),
        ("match", ["-openings", "file=BOOK", "start=0"], "-openings start=0: expected a whole"),
        ("match", ["-openings", "file=BOOK", "start=x"], "-openings start=x"),
        ("match", ["-openings", "file=BOOK", "start=\u00b2"], "-openings start=\u00b2: expected"),
        ("match", ["-openings", "file=BOOK", "start=" + "9" * 5000], "expected a whole number"),
        ("match", ["-use-affinity", "0-99999"], "'0-99999': CPU numbers go up to 8191"),
        ("match", ["-use-affinity", "\u00b2"], "is not a CPU number"),
        ("match", ["-openings", "file=BOOK", "start=4"], "start=4: BOOK has 3 usable opening"),
        ("match", ["-openings", "plies=2", "start=2"], "start=2: needs file=F"),
        ("match", ["-wait", "10", "-cluster", "local:1"], "-wait cannot be used with -cluster"),
        ("match", ["-seeds", "2"], "unknown option '-seeds'"),
        ("tournament", ["-seeds", "2"], "-seeds: only with -tournament gauntlet"),
        ("tournament", ["-tournament", "gauntlet", "-seeds", "0"], "-seeds: 0 is less than 1"),
        ("tournament", ["-tournament", "gauntlet", "-seeds", "two"], "-seeds: 'two' is not"),
        ("tournament", ["-concurrency", "2", "-use-affinity", "0"],
         "-use-affinity: 1 CPU(s) for 2 concurrent games"),
    ],
)
def test_bad_values_exit_2_with_one_line(tmp_path, command, argv, needle):
    path = str(book(tmp_path))
    argv = [word.replace("BOOK", path) for word in argv]
    needle = needle.replace("BOOK", path)
    done = guti(command, *PAIR, *argv, cwd=tmp_path, timeout=60)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().split("\n")
    assert len(lines) == 1 and needle in lines[0], done.stderr
    assert not (tmp_path / "guti.db").exists()


@pytest.mark.parametrize("command", ["match", "tournament"])
def test_help_lists_every_option(tmp_path, command):
    done = guti(command, "--help", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    text = done.stdout
    for option in ("-wait V", "-noswap", "-reverse", "-use-affinity [V]"):
        assert f"\n  {option}  " in text, option
    assert "start=N" in text
    assert ("\n  -seeds V  " in text) == (command == "tournament")


# --------------------------------------------------------------------------- pure parts


def test_seeded_gauntlet_pairings_and_clamp():
    from guti.referee.tournament.scheduler import pairings, schedule, total_games

    assert pairings("gauntlet", 4) == [(0, 1), (0, 2), (0, 3)]
    assert pairings("gauntlet", 4, seeds=2) == [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3)]
    assert pairings("gauntlet", 3, seeds=9) == pairings("roundrobin", 3)  # clamped to 2
    assert total_games("gauntlet", 5, 2, 2, seeds=3) == 9 * 2 * 2
    jobs = list(schedule("gauntlet", 4, 1, 2, seeds=2, noswap=True))
    assert [(j.white, j.black) for j in jobs] == [(i, j) for i, j in pairings("gauntlet", 4, 2)
                                                  for _ in range(2)]


def test_cpu_lists_and_slots():
    from guti.referee.process.affinity import CpuListError, parse_cpu_list, slot_cpus

    assert parse_cpu_list("3,5,7-11,13") == (3, 5, 7, 8, 9, 10, 11, 13)
    for bad in ("", "a", "1-", "-1", "2-1", "1,1", "0-2,2"):
        with pytest.raises(CpuListError):
            parse_cpu_list(bad)
    cpus = (0, 1, 2, 3, 4)
    groups = [slot_cpus(cpus, 2, k) for k in range(2)]
    assert groups == [(0, 1), (2, 3, 4)]
    assert [slot_cpus(cpus, 5, k) for k in range(5)] == [(c,) for c in cpus]
    assert slot_cpus(cpus, 1, 0) == cpus
