"""``-tournament knockout``: the bracket logic alone, then real ``guti tournament`` runs.

The real runs are checked against the database read with sqlite3 directly and walked
by this file's own bracket rules (the seeding written out by hand per field size), not
by guti's knockout module: who played whom in each round, that each winner follows
from the stored results, that tie-break pairs came exactly when a score was level.
"""

from __future__ import annotations

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

from guti.referee.game.openings import Opening
from guti.referee.tournament.knockout import (
    BracketError,
    build,
    minimum_games,
    new_jobs,
    seed_order,
)
from guti.rules import Board
from tests.conftest import GUTI, ROOT, parse_pdn, rows, wait_for

PY = sys.executable

# --------------------------------------------------------------------------- bracket logic


def test_standard_seeding_meets_seed_s_with_the_mirror_seed_and_keeps_top_seeds_apart():
    assert seed_order(2) == [0, 1]
    assert seed_order(4) == [0, 3, 1, 2]
    assert seed_order(8) == [0, 7, 3, 4, 1, 6, 2, 5]
    for size in (2, 4, 8, 16, 32):
        order = seed_order(size)
        assert sorted(order) == list(range(size))
        for k in range(size // 2):  # round 1: seed s against seed size-1-s
            assert order[2 * k] + order[2 * k + 1] == size - 1
        block = size
        while block >= 2:  # the top size/block seeds sit in different blocks
            tops = [order.index(s) // block for s in range(size // block)]
            assert len(set(tops)) == len(tops)
            block //= 2


def _play_out(engines: int, games: int, tiebreak: int, winner_of) -> tuple[list, dict]:
    """Run the bracket to the end, each game's result from ``winner_of(white, black)``
    ("1-0", "0-1" or "1/2-1/2"); returns the scheduled jobs and results."""
    jobs: list = []
    results: dict[int, str] = {}
    for _ in range(1000):
        bracket = build(engines, games, tiebreak,
                        [(j.game_id, j.round, j.white, j.black) for j in jobs], results)
        new = new_jobs(bracket, len(jobs), len(jobs) // 2, None)
        if not new:
            break
        for job in new:
            results[job.game_id] = winner_of(job.white, job.black)
        jobs += new
    return jobs, results


@pytest.mark.parametrize("engines", range(2, 18))
def test_byes_go_to_the_top_seeds_and_the_field_needs_n_minus_1_encounters(engines):
    size = 1 << (engines - 1).bit_length()
    bracket = build(engines, 2, 1, [], {})
    byes = [e.high for e in bracket.rounds[0] if e.bye]
    assert sorted(byes) == list(range(size - engines))  # seeds 1..byes, each once
    assert all(e.winner == e.high for e in bracket.rounds[0] if e.bye)
    # The higher seed always wins: every encounter 2 games, the top seed is champion.
    jobs, results = _play_out(engines, 2, 1, lambda w, b: "1-0" if w < b else "0-1")
    assert len(jobs) == minimum_games(engines, 2) == 2 * (engines - 1)
    final = build(engines, 2, 1, [(j.game_id, j.round, j.white, j.black) for j in jobs], results)
    assert final.champion == 0 and not final.rounds[-1][0].by_seed
    # The lowest seed always wins: it beats everyone it meets.
    jobs, results = _play_out(engines, 2, 1, lambda w, b: "1-0" if w > b else "0-1")
    final = build(engines, 2, 1, [(j.game_id, j.round, j.white, j.black) for j in jobs], results)
    assert final.champion == engines - 1


@pytest.mark.parametrize("tiebreak", [0, 1, 3])
def test_a_tie_plays_one_pair_at_a_time_up_to_the_limit_then_the_higher_seed_advances(tiebreak):
    jobs, results = _play_out(2, 4, tiebreak, lambda w, b: "1/2-1/2")
    assert len(jobs) == 4 + 2 * tiebreak
    bracket = build(2, 4, tiebreak, [(j.game_id, j.round, j.white, j.black) for j in jobs],
                    results)
    final = bracket.rounds[0][0]
    assert final.winner == 0 and final.by_seed and final.points == (2 + tiebreak, 2 + tiebreak)
    # A tie broken in the first tie-break pair: seed 2 wins both its extra games.
    count = Counter[str]()

    def second_pair_to_seed_2(w: int, b: int) -> str:
        count["n"] += 1
        if count["n"] <= 2:
            return "1-0"  # each side wins with White: 1 - 1
        return "0-1" if w == 0 else "1-0"
    jobs, results = _play_out(2, 2, 3, second_pair_to_seed_2)
    bracket = build(2, 2, 3, [(j.game_id, j.round, j.white, j.black) for j in jobs], results)
    assert len(jobs) == 4 and bracket.champion == 1 and not bracket.rounds[0][0].by_seed


def test_an_encounter_is_undecided_until_every_game_is_stored_and_strays_are_refused():
    jobs, _ = _play_out(4, 4, 1, lambda w, b: "1-0")
    first = [j for j in jobs if j.round == 1]
    rows = [(j.game_id, j.round, j.white, j.black) for j in first]
    # Three of four games won by seed 1 (3 - 0): clinched, but the fourth is still played.
    enc_games = [j for j in first if {j.white, j.black} == {0, 3}]
    results = {j.game_id: ("1-0" if j.white == 0 else "0-1") for j in enc_games[:3]}
    bracket = build(4, 4, 1, rows, results)
    assert bracket.rounds[0][0].winner is None and bracket.wanted() == []
    with pytest.raises(BracketError, match="belongs to no encounter"):
        build(4, 4, 1, [*rows, (99, 2, 0, 3)], {})  # 0 and 3 cannot meet in round 2
    with pytest.raises(BracketError):
        build(4, 4, 1, [*rows, (99, 1, 0, 1)], {})  # nor 0 and 1 in round 1


def test_each_pair_reverses_colours_on_one_opening_and_a_round_shares_openings():
    book = [Opening(None, (f"m{k}",), "test") for k in range(10)]
    bracket = build(4, 4, 2, [], {})
    jobs = new_jobs(bracket, 0, 0, book)
    assert [j.game_id for j in jobs] == list(range(8))
    pairs: dict[int, list] = {}
    for job in jobs:
        pairs.setdefault(job.pair_id, []).append(job)
    assert len(pairs) == 4
    for a, b in pairs.values():
        assert (a.white, a.black) == (b.black, b.white) and a.opening == b.opening
    by_encounter: dict[frozenset, list] = {}
    for job in jobs:
        by_encounter.setdefault(frozenset((job.white, job.black)), []).append(job.opening)
    assert len(by_encounter) == 2
    first, second = by_encounter.values()
    assert first == second == [book[0], book[0], book[1], book[1]]
    whites = Counter(j.white for j in jobs)
    assert set(whites.values()) == {2}  # every engine has White in half its games


# --------------------------------------------------------------------------- real runs

#: Round 1 of the bracket by hand (0-based seeds, None = bye), standard seeding.
FIRST_ROUND = {
    2: [(0, 1)],
    3: [(0, None), (1, 2)],
    4: [(0, 3), (1, 2)],
    5: [(0, None), (3, 4), (1, None), (2, None)],
}


def bot(name: str, seed: int = 0) -> list[str]:
    path = shlex.quote(str(ROOT / "bots" / "python" / "random_bot.py"))
    return ["-engine", f"cmd={PY}", f"args={path}", f"name={name}", f"option.Seed={seed}"]


def reference(name: str, level: int) -> list[str]:
    return ["-engine", f"cmd={PY}", "args=-m guti.engine", f"dir={ROOT}", f"name={name}",
            f"option.Level={level}"]


def guti(*args: str, cwd: Path, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run([*GUTI, "tournament", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, "PYTHONPATH": str(ROOT)})


def walk(db: Path, engines: int, games: int, tiebreak: int) -> tuple[int, int, list[str]]:
    """The bracket as stored, by this test's own rules: (champion, games it took, one
    line per encounter). Fails on any game outside the bracket or out of the rules."""
    names = [r[0] for r in rows(db, "SELECT name FROM engines ORDER BY idx")]
    played = {gid: (w, b, res) for gid, w, b, res in
              rows(db, "SELECT game_id, white_idx, black_idx, result FROM games")}
    scheduled: dict[tuple[int, frozenset], list[tuple]] = {}
    for row in rows(db, "SELECT game_id, pair_id, round, white, black, opening_moves "
                        "FROM schedule ORDER BY game_id"):
        scheduled.setdefault((row[2], frozenset(row[3:5])), []).append(row)
    assert set(played) == {r[0] for v in scheduled.values() for r in v}  # all played, once
    field = FIRST_ROUND[engines]
    total, said, rnd = 0, [], 1
    while True:
        winners = []
        for high, low in field:
            if low is None:
                winners.append(high)
                continue
            encounter = scheduled.pop((rnd, frozenset((high, low))))
            total += len(encounter)
            winners.append(_winner(encounter, played, high, low, games, tiebreak))
            said.append(f"round {rnd}: {names[high]} vs {names[low]}: {names[winners[-1]]}")
        if len(winners) == 1:
            assert not scheduled, f"games outside the bracket: {scheduled}"
            return winners[0], total, said
        field = [(min(a, b), max(a, b)) for a, b in zip(winners[::2], winners[1::2], strict=True)]
        rnd += 1


def _winner(encounter: list[tuple], played: dict, high: int, low: int, games: int,
            tiebreak: int) -> int:
    """The encounter's winner from its stored games, checking pairs and tie-breaks."""
    assert len(encounter) % 2 == 0 and games <= len(encounter) <= games + 2 * tiebreak
    points = {high: 0.0, low: 0.0}
    for k in range(0, len(encounter), 2):
        a, b = encounter[k], encounter[k + 1]
        assert a[1] == b[1] and (a[3], a[4]) == (b[4], b[3]) and a[5] == b[5]
        if k >= games:  # a tie-break pair is played only on a level score
            assert points[high] == points[low], (encounter, points)
        for gid, *_ in (a, b):
            white, black, result = played[gid]
            points[white] += {"1-0": 1, "1/2-1/2": 0.5}.get(result, 0)
            points[black] += {"0-1": 1, "1/2-1/2": 0.5}.get(result, 0)
    if points[high] != points[low]:
        return high if points[high] > points[low] else low
    assert len(encounter) == games + 2 * tiebreak  # level after every tie-break pair
    return high


@pytest.mark.parametrize("engines", [3, 4, 5])
def test_knockout_of_3_4_5_engines_plays_the_bracket_the_results_decide(tmp_path, engines):
    names = ["alpha", "bravo", "charlie", "delta", "echo"][:engines]
    field = [w for n in names for w in bot(n)]
    done = guti(*field, "-tournament", "knockout", "-games", "2", "-tiebreak", "1",
                "-each", "tc=2+0.02", "-concurrency", "2", "-openings", "random:2",
                "-srand", "3", "-pdnout", "k.pdn", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    db = tmp_path / "guti.db"
    champion, total, said = walk(db, engines, 2, 1)
    stored = rows(db, "SELECT COUNT(*) FROM games")[0][0]
    assert stored == total and (total - 2 * (engines - 1)) % 2 == 0
    assert f"Knockout winner: {names[champion]}\n" in done.stdout
    assert f"{stored}/{stored} games stored" in done.stdout
    assert len(parse_pdn((tmp_path / "k.pdn").read_text())) == stored
    byes = [high for high, low in FIRST_ROUND[engines] if low is None]
    for seed in byes:
        assert f"{names[seed]} has a bye and advances" in done.stdout
        assert rows(db, f"SELECT COUNT(*) FROM games WHERE round = 1 AND "
                        f"(white_idx = {seed} OR black_idx = {seed})")[0][0] == 0
    assert "Standings" in done.stdout and "Knockout bracket" in done.stdout


def test_a_tie_between_twins_is_decided_by_the_tiebreak_pairs_then_the_higher_seed(tmp_path):
    # Two copies of a seeded random mover: each game of a pair is the same game with the
    # engines swapped, so every pair is level and the encounter ties.
    for first, second in (("twin1", "twin2"), ("twin2", "twin1")):
        done = guti(*bot(first, 7), *bot(second, 7), "-tournament", "knockout",
                    "-games", "2", "-tiebreak", "2", "-each", "tc=2+0.02",
                    "-db", f"{first}.db", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        db = tmp_path / f"{first}.db"
        moves = rows(db, "SELECT game_id, result, moves FROM games ORDER BY game_id")
        assert len(moves) == 2 + 2 * 2
        assert len({m for _, _, m in moves}) == 1  # the very same game every time
        champion, total, _ = walk(db, 2, 2, 2)
        assert champion == 0 and total == 6
        # the one encounter is the final: its lines say so
        assert f"Knockout final: {first} 1 - 1 {second} is tied: a tie-break pair is played" \
               in done.stdout, done.stdout
        # two engines: the one encounter is the final, which the higher seed wins
        assert f"Knockout final: {first} 3 - 3 {second} (6 games): {first} wins as the " \
               "higher seed (still tied after them)\n" in done.stdout, done.stdout
        assert f"Knockout winner: {first}\n" in done.stdout


@pytest.mark.parametrize("args, words", [
    (["-games", "3"], "-games must be even, got 3"),
    (["-rounds", "2"], "-rounds: not with -tournament knockout"),
    (["-tiebreak", "-1"], "-tiebreak: -1 is less than 0"),
])
def test_knockout_mistakes_are_one_line_and_exit_2(tmp_path, args, words):
    done = guti(*bot("a"), *bot("b"), "-each", "st=0.01", "-tournament", "knockout", *args,
                cwd=tmp_path)
    assert done.returncode == 2 and words in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not (tmp_path / "guti.db").exists()
    other = guti(*bot("a"), *bot("b"), "-each", "st=0.01", "-tiebreak", "1", cwd=tmp_path)
    assert other.returncode == 2 and "only for -tournament knockout" in other.stderr


def killed(concurrency: int) -> list[str]:
    """Four engines, round 1 of reference engine against random mover."""
    return [*reference("ref2", 2), *reference("ref1", 1), *bot("rnd1"), *bot("rnd2"),
            "-tournament", "knockout", "-games", "2", "-tiebreak", "1", "-each", "st=0.02",
            "-concurrency", str(concurrency), "-pdnout", "k.pdn"]


KILLED = killed(2)


def test_sigkill_mid_bracket_then_resume_finishes_it_with_each_game_once(tmp_path):
    db = tmp_path / "guti.db"
    proc = subprocess.Popen([*GUTI, "tournament", *KILLED], cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        def in_final() -> bool:  # round 1 decided, the final under way
            assert proc.poll() is None, "the knockout ended before it could be killed"
            try:
                return bool(db.exists() and rows(
                    db, "SELECT COUNT(*) FROM games WHERE round = 2")[0][0] == 0 and rows(
                    db, "SELECT COUNT(*) FROM schedule WHERE round = 2")[0][0])
            except sqlite3.OperationalError:
                return False
        wait_for(in_final, "the final scheduled", 120)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(30)
    before = rows(db, "SELECT game_id, result, moves FROM games")
    # killed in the final (a game of it may have been stored just before the kill)
    final = "SELECT COUNT(*) FROM {} WHERE round = 2"
    assert rows(db, final.format("games"))[0][0] < rows(db, final.format("schedule"))[0][0]
    again = guti(*KILLED, "-resume", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert f"resuming: {len(before)}/" in again.stdout
    after = rows(db, "SELECT game_id, result, moves FROM games")
    assert set(before) <= set(after)  # nothing stored before the kill changed
    ids = sorted(r[0] for r in after)
    assert ids == list(range(len(ids)))  # no gap, no game twice
    champion, total, _ = walk(db, 4, 2, 1)
    assert total == len(after)
    names = [r[0] for r in rows(db, "SELECT name FROM engines ORDER BY idx")]
    assert f"Knockout winner: {names[champion]}\n" in again.stdout
    assert len(parse_pdn((tmp_path / "k.pdn").read_text())) == len(after)


def test_a_kill_between_a_stored_game_and_the_next_round_is_scheduled_on_resume(tmp_path):
    args = [*bot("a"), *bot("b"), *bot("c"), "-tournament", "knockout", "-games", "2",
            "-tiebreak", "0", "-each", "tc=2+0.02"]
    done = guti(*args, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    db = tmp_path / "guti.db"
    first_round = rows(db, "SELECT game_id, result, moves FROM games WHERE round = 1")
    # The state a kill leaves right after round 1's last game was stored: no final yet.
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM games WHERE round = 2")
        conn.execute("DELETE FROM schedule WHERE round = 2")
    again = guti(*args, "-resume", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    # the final, scheduled by the resume, in the bracket it prints first
    assert re.search(r"^  final:\n    \S+ 0 - 0 \S+ \(0/2 games played\)$", again.stdout,
                     re.M), again.stdout
    assert rows(db, "SELECT game_id, result, moves FROM games WHERE round = 1") == first_round
    champion, total, _ = walk(db, 3, 2, 0)
    assert total == rows(db, "SELECT COUNT(*) FROM games")[0][0] == 4
    assert rows(db, "SELECT COUNT(*) FROM games WHERE round = 2")[0][0] == 2


#: The final's openings, as scheduled.
FINAL = "SELECT game_id, opening_fen, opening_moves FROM schedule WHERE round = 2"


def _three_with_openings(*openings: str) -> list[str]:
    """A three-engine knockout, no tie-breaks, with ``-openings`` and what follows it."""
    return [*bot("a"), *bot("b"), *bot("c"), "-tournament", "knockout", "-games", "2",
            "-tiebreak", "0", "-each", "tc=2+0.02", "-openings", *openings]


def _played_then_final_undone(args: list[str], tmp_path: Path) -> list[tuple]:
    """Play the knockout, then take its final out as a kill right after round 1 leaves
    it; the final's openings as they were scheduled."""
    assert guti(*args, cwd=tmp_path).returncode == 0
    db = tmp_path / "guti.db"
    planned = rows(db, FINAL)
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM games WHERE round = 2")
        conn.execute("DELETE FROM schedule WHERE round = 2")
    return planned


def test_a_resume_schedules_the_later_rounds_on_the_openings_drawn_at_the_start(tmp_path):
    """Without -srand the openings' seed is drawn once and stored: the rounds a resume
    schedules get the openings they would have had without the kill."""
    args = _three_with_openings("random:6")
    planned = _played_then_final_undone(args, tmp_path)
    again = guti(*args, "-resume", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert rows(tmp_path / "guti.db", FINAL) == planned and len(planned) == 2


def test_a_resume_refuses_an_openings_file_changed_since_the_start(tmp_path):
    """A knockout's later rounds draw from the openings file again on a resume: the same
    lines in another order would give them other openings. Refused in one line; with the
    file as it was, the final gets the openings planned at the start."""
    board = Board("egara-guti")
    lines = []
    for first in board.legal_moves:
        board.push(first)
        lines += [f"{first} {reply}" for reply in board.legal_moves]
        board.pop()
    (tmp_path / "op.epd").write_text("\n".join(lines) + "\n")
    args = _three_with_openings("file=op.epd", "order=random", "-srand", "5")
    planned = _played_then_final_undone(args, tmp_path)
    (tmp_path / "op.epd").write_text("\n".join(reversed(lines)) + "\n")
    refused = guti(*args, "-resume", cwd=tmp_path)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert refused.stderr == ("guti tournament: guti.db: the openings file op.epd is not what it "
                              "was when the tournament began (its contents differ): resume it "
                              "with that file as it was\n")
    (tmp_path / "op.epd").write_text("\n".join(lines) + "\n")
    again = guti(*args, "-resume", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert rows(tmp_path / "guti.db", FINAL) == planned and len(planned) == 2


@pytest.mark.signals
def test_ctrl_c_mid_bracket_lets_running_games_finish_and_resume_completes(tmp_path):
    # Concurrency 3 for round 1's four games: once the fourth starts, a worker waits for
    # results (the final is not known yet); Ctrl-C must end that wait too.
    args = killed(3)
    db = tmp_path / "guti.db"
    proc = subprocess.Popen([*GUTI, "tournament", *args], cwd=tmp_path, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})

    def two_stored() -> bool:
        assert proc.poll() is None, "the knockout ended before Ctrl-C"
        try:
            return bool(db.exists() and rows(db, "SELECT COUNT(*) FROM games")[0][0] >= 2)
        except sqlite3.OperationalError:
            return False

    wait_for(two_stored, "two games stored", 120)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=90)
    assert proc.returncode == 130, err
    assert "stopping: no new games" in out and "-resume" in err
    stored = rows(db, "SELECT result FROM games")
    assert all(r[0] in ("1-0", "0-1", "1/2-1/2") for r in stored)
    again = guti(*args, "-resume", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    champion, total, _ = walk(db, 4, 2, 1)
    assert rows(db, "SELECT COUNT(DISTINCT game_id), COUNT(*) FROM games")[0] == (total, total)
    names = [r[0] for r in rows(db, "SELECT name FROM engines ORDER BY idx")]
    assert f"Knockout winner: {names[champion]}\n" in again.stdout


@pytest.mark.cluster
def test_knockout_on_a_local_cluster_plays_the_same_bracket(tmp_path):
    """On Dask workers the next encounter is scheduled from the results that came back:
    the bracket is complete, every game once, the winner the results decide."""
    pytest.importorskip("distributed")
    names = ["alpha", "bravo", "charlie", "delta", "echo"]
    field = [w for n in names for w in bot(n)]
    done = guti(*field, "-tournament", "knockout", "-games", "2", "-tiebreak", "1",
                "-each", "tc=2+0.02", "-cluster", "local:2", "-openings", "random:2",
                "-srand", "5", cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    champion, total, _ = walk(tmp_path / "guti.db", 5, 2, 1)
    assert rows(tmp_path / "guti.db", "SELECT COUNT(*) FROM games")[0][0] == total
    assert f"Knockout winner: {names[champion]}\n" in done.stdout
