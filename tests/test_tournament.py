"""Real tournaments of real engine processes through ``guti tournament``.

Every test runs the CLI as a subprocess and then reads the SQLite database
directly (not through guti's store code) to check what was stored.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import sqlite3
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import GUTI, ROOT, parse_pdn, rows, survivors, wait_for

FAULTY = ROOT / "tests" / "engines" / "faulty.py"
PY = sys.executable


def bot(name: str, script: str) -> list[str]:
    path = shlex.quote(str(ROOT / "bots" / "python" / script))
    return ["-engine", f"cmd={PY}", f"args={path}", f"name={name}"]


def reference(name: str, level: int = 20) -> list[str]:
    return ["-engine", f"cmd={PY}", "args=-m guti.engine", f"dir={ROOT}", f"name={name}",
            f"option.Level={level}"]


def faulty(name: str, mode: str, at: int = 1) -> list[str]:
    args = shlex.join([str(FAULTY), "--mode", mode, "--at", str(at)])
    return ["-engine", f"cmd={PY}", f"args={args}", f"name={name}"]


def guti(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([*GUTI, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "PYTHONPATH": str(ROOT)})


def tourney(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    return guti("tournament", *args, cwd=cwd, timeout=timeout)


def pdn_games(path: Path) -> list[dict[str, str]]:
    """Tag dicts of every game in a PDN file, read by guti's PDN reader."""
    return [game.tags for game in parse_pdn(path.read_text())]


def test_round_robin_three_engines_openings_file_concurrency_two(tmp_path):
    book = tmp_path / "book.txt"
    book.write_text("# two openings and one bad line\n14-12\n13-12 11x13 # with a comment\n"
                    "99-98 this is not a move\n")
    done = tourney(*bot("rnd", "random_bot.py"), *bot("greedy", "greedy_bot.py"),
                *reference("ref", 3), "-each", "tc=2+0.02", "-rounds", "2", "-games", "2",
                "-concurrency", "2", "-openings", f"file={book}", "-pdnout", "out.pdn",
                "-srand", "7", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"{book}:4: skipped opening" in done.stderr + done.stdout
    db = tmp_path / "guti.db"
    games = rows(db, "SELECT white, black, result, reason, round, pair_id, moves FROM games")
    assert len(games) == 3 * 2 * 2  # 3 pairings x 2 rounds x 2 games
    per_pair = Counter(frozenset((w, b)) for w, b, *_ in games)
    assert set(per_pair.values()) == {4} and len(per_pair) == 3
    as_white = Counter(w for w, *_ in games)
    assert set(as_white.values()) == {4}  # colours balanced
    for pair in {p for *_, p, _m in games}:
        two = [g for g in games if g[5] == pair]
        assert len(two) == 2 and two[0][0] == two[1][1] and two[0][1] == two[1][0]
        first_moves = {g[6].split()[0] for g in two}
        assert len(first_moves) == 1  # both games of a pair from the same opening
    assert all(g[2] in ("1-0", "0-1", "1/2-1/2") and g[3] for g in games)
    pdn = pdn_games(tmp_path / "out.pdn")
    assert len(pdn) == len(games)
    assert Counter(g["Result"] for g in pdn) == Counter(g[2] for g in games)
    assert "Standings" in done.stdout and "Crosstable" in done.stdout
    for name in ("rnd", "greedy", "ref"):
        assert name in done.stdout


def test_gauntlet_with_random_openings_export_and_standings(tmp_path):
    done = tourney(*reference("ref", 2), *bot("rnd", "random_bot.py"),
                *bot("greedy", "greedy_bot.py"), *faulty("good", "good"),
                "-tournament", "gauntlet", "-each", "st=0.02", "-games", "4",
                "-openings", "random:3", "-srand", "5", "-concurrency", "2",
                "-game", "pretwa", "-db", "g.db", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    db = tmp_path / "g.db"
    games = rows(db, "SELECT white, black FROM games")
    assert len(games) == 3 * 4
    assert all("ref" in (w, b) for w, b in games)
    out = guti("export", "g.db", "-json", "g.json", "-pdn", "g.pdn", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    exported = json.loads((tmp_path / "g.json").read_text())
    assert len(exported) == 12
    for g in exported:
        assert {"white", "black", "result", "reason", "moves", "start_fen", "round"} <= set(g)
        assert len(g["moves"]) >= 3 and g["start_fen"].endswith(" w 0 1")
    assert len({tuple(g["moves"][:3]) for g in exported}) >= 2  # openings really vary
    assert len(pdn_games(tmp_path / "g.pdn")) == 12
    table = guti("standings", "g.db", cwd=tmp_path)
    assert table.returncode == 0, table.stderr
    assert "Game pairs" in table.stdout and "12/12 games played" in table.stdout
    assert guti("standings", "missing.db", cwd=tmp_path).returncode == 2


def _wait_for_games(db: Path, count: int, proc: subprocess.Popen, bound: float = 60) -> int:
    stored = [0]

    def enough() -> bool:
        assert proc.poll() is None, "the tournament ended before it could be killed"
        if db.exists():
            try:
                stored[0] = rows(db, "SELECT COUNT(*) FROM games")[0][0]
            except sqlite3.OperationalError:
                stored[0] = 0
        return stored[0] >= count

    wait_for(enough, f"{count} games stored", bound)
    return stored[0]


TOURNEY = [*reference("ref", 4), *bot("greedy", "greedy_bot.py"), *bot("rnd", "random_bot.py"),
           "-each", "st=0.03", "-rounds", "3", "-games", "2", "-concurrency", "2",
           "-openings", "random:2", "-srand", "11", "-pdnout", "t.pdn"]


def test_sigkill_mid_run_then_resume_plays_each_scheduled_game_once(tmp_path):
    proc = subprocess.Popen([*GUTI, "tournament", *TOURNEY], cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        _wait_for_games(tmp_path / "guti.db", 3, proc)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(30)
    db = tmp_path / "guti.db"
    before = rows(db, "SELECT game_id, result, moves FROM games")
    scheduled = {r[0] for r in rows(db, "SELECT game_id FROM schedule")}
    assert len(scheduled) == 18 and 3 <= len(before) < 18
    again = guti("tournament", *TOURNEY, "-resume", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert f"resuming: {len(before)}/18" in again.stdout
    after = rows(db, "SELECT game_id, result, moves FROM games")
    ids = [r[0] for r in after]
    assert sorted(ids) == sorted(scheduled) and len(ids) == len(set(ids))
    assert set(before) <= set(after)  # nothing stored before the kill changed
    pdn = pdn_games(tmp_path / "t.pdn")
    assert len(pdn) == 18  # the PDN file agrees with the database again
    assert [g["Result"] for g in pdn] == [r[1] for r in rows(db, "SELECT 0, result FROM games "
                                                                 "ORDER BY seq")]
    # Resuming a finished tournament plays nothing and says so.
    third = guti("tournament", *TOURNEY, "-resume", cwd=tmp_path)
    assert third.returncode == 0 and "18/18 games stored" in third.stdout


@pytest.mark.signals
def test_ctrl_c_finishes_running_games_stores_nothing_false_and_resumes(tmp_path):
    proc = subprocess.Popen([*GUTI, "tournament", *TOURNEY], cwd=tmp_path, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    _wait_for_games(tmp_path / "guti.db", 2, proc)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "stopping: no new games" in out and "-resume" in err
    db = tmp_path / "guti.db"
    stored = rows(db, "SELECT result FROM games")
    assert stored and all(r[0] in ("1-0", "0-1", "1/2-1/2") for r in stored)
    assert len(stored) < 18
    again = guti("tournament", *TOURNEY, "-resume", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert rows(db, "SELECT COUNT(DISTINCT game_id), COUNT(*) FROM games")[0] == (18, 18)


@pytest.mark.signals
@pytest.mark.parametrize("command", ["tournament", "match"])
def test_ctrl_c_while_the_engines_start_stops_at_once(tmp_path, command):
    """No game runs yet, so a graceful stop has nothing to wait for: one Ctrl-C cuts the
    engines' start check short (here an engine that never answers ``ugi``, with a
    handshake timeout of five minutes) instead of waiting it out."""
    pidfile = tmp_path / "mute.pids"
    args = shlex.join([str(FAULTY), "--mode", "no-ugiok", "--pidfile", str(pidfile)])
    proc = subprocess.Popen([*GUTI, command, "-engine", f"cmd={PY}", f"args={args}",
                             "name=mute", *bot("rnd", "random_bot.py"), "-each", "st=0.03",
                             "-games", "2", "-handshake-timeout", "300"],
                            cwd=tmp_path, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        wait_for(lambda: pidfile.exists() and pidfile.read_text().strip(), "the mute engine up")
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "stopping: no new games, and none is running" in out, out
    assert "Traceback" not in err
    assert survivors(pidfile) == []
    # nothing was played, so nothing is kept
    assert not (tmp_path / "guti.db").exists() or rows(tmp_path / "guti.db",
                                                       "SELECT COUNT(*) FROM games") == [(0,)]


def test_crashing_engine_loses_its_games_and_the_tournament_goes_on(tmp_path):
    done = tourney(*faulty("crashy", "crash", at=2), *bot("rnd", "random_bot.py"),
                *bot("greedy", "greedy_bot.py"), "-each", "tc=2+0.02", "-games", "4",
                "-concurrency", "2", "-ratinginterval", "4", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("Standings") == 3  # after games 4 and 8, and at the end
    games = rows(tmp_path / "guti.db", "SELECT white, black, result, reason, fault FROM games")
    assert len(games) == 12
    crashes = [g for g in games if g[3] == "disconnect"]
    assert crashes and all((g[0] == "crashy") == (g[4] == "w") for g in crashes)
    line = next(ln for ln in reversed(done.stdout.splitlines())
                if "│ crashy" in ln and ln.count("│") > 12)  # the standings row
    cells = [c.strip() for c in line.strip().strip("│").split("│")]
    head = next(ln for ln in done.stdout.splitlines() if "┃ crash" in ln)
    crash_column = [c.strip() for c in head.strip().strip("┃").split("┃")].index("crash")
    assert cells[1] == "crashy" and cells[crash_column] == str(len(crashes))


def test_engine_that_cannot_start_is_one_line_and_exit_2(tmp_path):
    done = tourney("-engine", "cmd=/nonexistent/engine", *bot("rnd", "random_bot.py"),
                "-each", "tc=1", cwd=tmp_path)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "nonexistent" in done.stderr


@pytest.mark.parametrize(
    "args, words",
    [
        (["-tournament", "swiss"], "unknown format"),
        (["-rounds", "x"], "not a whole number"),
        (["-srand", "9" * 29], "'" + "9" * 29 + "' is too large (at most 18 digits)"),
        (["-sprt", "elo0=5", "elo1=0"], "elo0 < elo1"),
        (["-openings", "file=/no/such/book"], "openings file"),
    ],
)
def test_command_line_mistakes_are_one_line(tmp_path, args, words):
    done = tourney(*bot("a", "random_bot.py"), *bot("b", "random_bot.py"), "-each", "tc=1",
                *args, cwd=tmp_path)
    assert done.returncode == 2
    assert words in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_a_resume_plays_the_stored_openings_though_their_file_is_gone(tmp_path):
    (tmp_path / "book.txt").write_text("13-12 11x13 16x12\n14-12 10x14 17x12\n")
    base = [*bot("a", "random_bot.py"), *bot("b", "random_bot.py"), "-each", "tc=1",
            "-games", "2", "-rounds", "2", "-openings"]
    assert tourney(*base, "file=book.txt", cwd=tmp_path).returncode == 0
    db = tmp_path / "guti.db"
    with sqlite3.connect(db) as conn:  # as a run killed after its first two games leaves it
        conn.execute("DELETE FROM games WHERE game_id >= 2")
    (tmp_path / "book.txt").unlink()
    again = tourney(*base, "file=book.txt", "-resume", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "resuming: 2/4" in again.stdout and "4/4 games stored" in again.stdout
    played = rows(db, "SELECT moves FROM games WHERE game_id >= 2")
    assert len(played) == 2 and all(m.startswith("14-12 10x14 17x12 ") for (m,) in played)
    moved = tourney(*base, "file=./book.txt", "-resume", cwd=tmp_path)
    assert moved.returncode == 2 and "(other openings)" in moved.stderr, moved.stderr


def test_existing_database_needs_resume_and_a_different_one_is_refused(tmp_path):
    base = [*bot("a", "random_bot.py"), *bot("b", "random_bot.py"), "-each", "tc=1", "-games", "2"]
    assert tourney(*base, cwd=tmp_path).returncode == 0
    again = tourney(*base, cwd=tmp_path)
    assert again.returncode == 2 and "add -resume" in again.stderr
    other = tourney(*base[:-1], "4", "-resume", cwd=tmp_path)
    assert other.returncode == 2 and "different tournament (other games)" in other.stderr
    # the same engines with another time control: what differs in them is named
    timed = tourney(*base[:9], "tc=2", "-games", "2", "-resume", cwd=tmp_path)
    assert timed.returncode == 2, timed.stderr
    assert "(other engines (limits of a, limits of b))" in timed.stderr, timed.stderr
    table = guti("standings", "guti.db", "-sprt", "elo0=0", "elo1=10", cwd=tmp_path)
    assert table.returncode == 0 and "SPRT a vs b (elo0=0 elo1=10" in table.stdout
    bad = guti("standings", "guti.db", "-sprt", "elo0=x", cwd=tmp_path)
    assert bad.returncode == 2 and "elo0=x" in bad.stderr


def test_sprt_stops_when_a_bound_is_crossed(tmp_path):
    # A depth limit, not a time limit: the engine's strength must not depend on the load.
    done = tourney(*reference("ref", 20), *bot("rnd", "random_bot.py"), "-each", "depth=2",
                "-games", "200", "-concurrency", "2", "-sprt", "elo0=0", "elo1=50",
                "-game", "pretwa", "-openings", "random:2", "-srand", "3", "-quiet",
                cwd=tmp_path, timeout=240)
    assert done.returncode == 0, done.stderr
    assert "SPRT: H1 accepted" in done.stdout
    played = rows(tmp_path / "guti.db", "SELECT COUNT(*) FROM games")[0][0]
    assert 4 <= played < 200
    # the standings of the database say what the run said, without -sprt given again
    table = guti("standings", "guti.db", cwd=tmp_path)
    assert table.returncode == 0 and "H1 accepted" in table.stdout, table.stdout
    # The decision is kept as the run took it. Games that were running at the stop can
    # move the LLR back inside its bounds (here: every result made a draw, far more than
    # they can): the standings still say the test ended, and a resume plays nothing.
    [(kept,)] = rows(tmp_path / "guti.db", "SELECT value FROM meta WHERE key = 'sprt_decided'")
    assert json.loads(kept)["decision"] == "H1"
    with sqlite3.connect(tmp_path / "guti.db") as conn:
        conn.execute("UPDATE games SET result = '1/2-1/2', fault = NULL")
    conn.close()
    table = guti("standings", "guti.db", cwd=tmp_path)
    assert table.returncode == 0, table.stderr
    said = re.search(r"LLR (\S+) \[\S+ \S+\] H1 accepted \(LLR (\S+) with the pairs finished "
                     r"after the decision\)", " ".join(table.stdout.split()))
    assert said and said[1] == f"{json.loads(kept)['llr']:.2f}" and float(said[2]) < 2.94, \
        table.stdout
    again = tourney(*reference("ref", 20), *bot("rnd", "random_bot.py"), "-each", "depth=2",
                    "-games", "200", "-concurrency", "2", "-sprt", "elo0=0", "elo1=50",
                    "-game", "pretwa", "-openings", "random:2", "-srand", "3", "-quiet",
                    "-resume", cwd=tmp_path, timeout=240)
    assert again.returncode == 0, again.stderr
    assert rows(tmp_path / "guti.db", "SELECT COUNT(*) FROM games")[0][0] == played


def test_toml_config_skips_missing_toolchains_and_flags_override(tmp_path):
    cfg = tmp_path / "t.toml"
    cfg.write_text(
        f"""
game = "pretwa"
games = 2
concurrency = 1
db = "cfg.db"
[each]
tc = "1+0.01"
[[engine]]
name = "rnd"
cmd = "{{python}}"
args = ["{ROOT / 'bots' / 'python' / 'random_bot.py'}"]
[[engine]]
name = "greedy"
cmd = "{{python}}"
args = ["{ROOT / 'bots' / 'python' / 'greedy_bot.py'}"]
options = {{ Seed = 4 }}
[[engine]]
name = "ghost"
cmd = "ghost-engine"
requires = ["no-such-toolchain-xyz"]
"""
    )
    done = guti("tournament", str(cfg), "-games", "4", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "skipping engine ghost: no-such-toolchain-xyz is not installed" in done.stdout
    games = rows(tmp_path / "cfg.db", "SELECT white, black FROM games")
    assert len(games) == 4 and {n for g in games for n in g} == {"rnd", "greedy"}
    bad = tmp_path / "bad.toml"
    bad.write_text("games = [1, 2\n")
    broken = guti("tournament", str(bad), cwd=tmp_path)
    assert broken.returncode == 2 and "bad.toml" in broken.stderr
    typed = tmp_path / "typed.toml"
    typed.write_text('[[engine]]\ncmd = "x"\nargs = [1, { y = 2 }]\n')
    wrong = guti("tournament", str(typed), cwd=tmp_path)
    assert wrong.returncode == 2 and "engine #1.args: expected a string or number" in wrong.stderr
    typed.write_text('[[engine]]\ncmd = "x"\nrequires = "no-such-tool-q"\n')
    skipped = guti("tournament", str(typed), cwd=tmp_path)
    assert "skipping engine x: no-such-tool-q is not installed" in skipped.stdout


@pytest.mark.slow
def test_bundled_tournament_config_runs(tmp_path):
    """The README's main command's config, shortened: every bot whose toolchain is here
    plays, the others are skipped with one line each."""
    import shutil

    # A copy of the config and the bots, so the builds it runs stay out of the source tree.
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "bots", repo / "bots",
                    ignore=shutil.ignore_patterns("build", "bot", "*.class", "__pycache__"))
    (repo / "tournaments").mkdir()
    shutil.copy(ROOT / "tournaments" / "bundled.toml", repo / "tournaments")
    done = tourney(str(repo / "tournaments" / "bundled.toml"), "-rounds", "1", "-games", "1",
                   "-db", str(tmp_path / "b.db"), "-pdnout", str(tmp_path / "b.pdn"),
                   "-each", "tc=1+0.01", "-quiet", cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    expected = {"guti-20", "guti-6", "greedy-py", "random-py"}
    for name, tools in (("greedy-c", ["gcc", "make"]), ("greedy-js", ["node"]),
                        ("random-java", ["javac", "java"])):
        missing = [t for t in tools if shutil.which(t) is None]
        if missing:
            assert f"skipping engine {name}: {missing[0]} is not installed" in done.stdout
        else:
            expected.add(name)
    names = {n for row in rows(tmp_path / "b.db", "SELECT white, black FROM games") for n in row}
    assert names == expected
    faults = rows(tmp_path / "b.db", "SELECT COUNT(*) FROM games WHERE fault IS NOT NULL")
    assert faults == [(0,)]
    # The config asks for the HTML report; its path is the last line, to open.
    assert done.stdout.rstrip().splitlines()[-1] == "out/bundled.html"
    assert (tmp_path / "out" / "bundled.html").stat().st_size > 10_000


def test_terminal_shows_live_progress_with_rate_eta_and_leader(tmp_path):
    import pexpect

    args = [*bot("rnd", "random_bot.py"), *bot("greedy", "greedy_bot.py"), *reference("ref", 2),
            "-each", "st=0.03", "-games", "6", "-concurrency", "1", "-quiet"]
    child = pexpect.spawn(GUTI[0], [*GUTI[1:], "tournament", *args], cwd=str(tmp_path),
                          env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "160"},
                          encoding="utf-8", timeout=60, dimensions=(40, 160))
    child.expect(r"games/s")
    child.expect(r"leader \S+ [\d.]+/\d+")
    child.expect("Standings")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


@pytest.mark.slow
def test_restart_on_gives_every_game_a_fresh_process_and_none_survives(tmp_path):
    pids = {name: tmp_path / f"{name}.pids" for name in ("forky", "stubborn")}

    def engine(name: str, mode: str, *more: str) -> list[str]:
        args = shlex.join([str(FAULTY), "--mode", mode, "--pidfile", str(pids[name])])
        return ["-engine", f"cmd={PY}", f"args={args}", f"name={name}", *more]

    done = tourney(*engine("forky", "fork", "restart=on"), *engine("stubborn", "ignore-quit"),
                   "-each", "tc=2+0.02", "-games", "4", "-concurrency", "2", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert rows(tmp_path / "guti.db", "SELECT COUNT(*) FROM games WHERE fault IS NULL") == [(4,)]
    forky_starts = {ln.split()[0] for ln in pids["forky"].read_text().splitlines()}
    assert len(forky_starts) >= 2 * 4  # an engine and its grandchild for each of 4 games
    for name, path in pids.items():
        assert survivors(path) == [], name


def _processes_in(folder: Path) -> list[int]:
    """Pids of live processes whose working directory is ``folder``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.readlink(entry / "cwd") == str(folder):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _read_until(proc: subprocess.Popen, text: str, timeout: float = 30) -> str:
    """The process's output up to the first line containing ``text`` (read by a thread,
    so the wait has a deadline)."""
    seen: list[str] = []
    found = threading.Event()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            seen.append(line)
            if text in line:
                found.set()
                return

    threading.Thread(target=pump, daemon=True).start()
    assert found.wait(timeout), f"{text!r} not in the output within {timeout:g} s: {seen}"
    return "".join(seen)


@pytest.mark.signals
def test_second_ctrl_c_aborts_running_games_stores_none_and_kills_engines(tmp_path):
    home = tmp_path / "engines"
    home.mkdir()
    slow = ["-engine", f"cmd={PY}", "args=-m guti.engine", f"dir={home}", "name=slow"]
    proc = subprocess.Popen(
        [*GUTI, "tournament", *slow, *bot("rnd", "random_bot.py"), "-each", "st=1",
         "-games", "4", "-concurrency", "2"],
        cwd=tmp_path, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    wait_for(lambda: len(_processes_in(home)) >= 2, "both games running")
    assert len(_processes_in(home)) == 2, "both games should be running"
    proc.send_signal(signal.SIGINT)
    said = _read_until(proc, "Ctrl-C again")  # the first Ctrl-C is taken in
    assert "finishing 2 running game(s)" in said, said
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=30)
    err = said + out
    # Aborted, not played to the end: nothing stored (a finished game would be).
    assert proc.returncode == 130, err
    assert rows(tmp_path / "guti.db", "SELECT COUNT(*) FROM games") == [(0,)]
    assert _processes_in(home) == []
    again = tourney(*slow, *bot("rnd", "random_bot.py"), "-each", "st=0.05", "-games", "4",
                    "-resume", cwd=tmp_path)
    assert again.returncode == 2 and "different tournament" in again.stderr  # st differs


def test_an_in_memory_database_plays_and_stores_every_game(tmp_path):
    """``-db :memory:`` (a throwaway run: SQLite's private in-memory database) stores its
    games there and in the PDN file, as a file database would."""
    done = tourney(*bot("a", "random_bot.py"), *bot("b", "random_bot.py"), "-each",
                   "tc=5+0.1", "-games", "4", "-concurrency", "2", "-db", ":memory:",
                   "-pdnout", "t.pdn", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "4/4 games stored in :memory:" in done.stdout
    assert len(pdn_games(tmp_path / "t.pdn")) == 4
    assert not list(tmp_path.glob("*.db*"))  # nothing of it on disk
