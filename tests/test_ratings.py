"""Ratings of a whole field (``guti.referee.stats.ratings`` and ``guti standings DB...``).

The maximum-likelihood solver (Newton's method) is checked against two
independent computations written here from the model's definition, not from
guti's code: Hunter's MM iteration (``half`` draw model) and a coordinate-wise
solve of the likelihood equations by bisection (``davidson``). The data are
real tournaments played by ``guti tournament`` (reference engine at several
``Level``s and a bundled bot), read straight from SQLite, and simulated
fields. The 95 % intervals are checked by simulation against known true
ratings, and the command line through real ``guti standings`` runs.
"""

from __future__ import annotations

import io
import math
import os
import random
import re
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from guti.referee.cli.standings_view import make_console, print_standings, ratings_table
from guti.referee.stats.ratings import (
    ELO_PER_NAT,
    PRIOR_DRAWS,
    RatingError,
    RatingOptions,
    rate,
)
from guti.referee.stats.standings import Standings

#: One worker runs this module: its module fixture (real runs) then happens once, not per worker.
pytestmark = pytest.mark.xdist_group("ratings")

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable

Counts = dict[tuple[int, int], list[float]]  # (i, j), i < j -> [wins of i, draws, losses of i]


# --------------------------------------------------------------------------- #
# Independent reference computations (from the model's definition)
# --------------------------------------------------------------------------- #
def with_virtual_draws(count: int, counts: Counts, prior: float = PRIOR_DRAWS) -> Counts:
    """The documented prior: pair (i, j) that met gets prior/2 * (1/k_i + 1/k_j) virtual
    draws, each counted as half a win and half a loss."""
    met = [0] * count
    for i, j in counts:
        met[i] += 1
        met[j] += 1
    virtual = {(i, j): prior / 2 * (1 / met[i] + 1 / met[j]) for i, j in counts}
    return {
        (i, j): [w + virtual[(i, j)] / 2, d, lo + virtual[(i, j)] / 2]
        for (i, j), (w, d, lo) in counts.items()
    }


def centred(values: list[float]) -> list[float]:
    mean = sum(values) / len(values)
    return [v - mean for v in values]


def hunter_mm(count: int, counts: Counts) -> list[float]:
    """Bradley-Terry by Hunter's (2004) MM iteration, draws as half a win.

    gamma_i <- W_i / sum_j n_ij / (gamma_i + gamma_j), with W_i the points of
    i; returns Elo ratings with average 0.
    """
    points = [0.0] * count
    games: dict[tuple[int, int], float] = {}
    for (i, j), (w, d, lo) in counts.items():
        points[i] += w + d / 2
        points[j] += lo + d / 2
        games[(i, j)] = games[(j, i)] = w + d + lo
    gamma = [1.0] * count
    for _ in range(200_000):
        new = []
        for i in range(count):
            denominator = sum(n / (gamma[i] + gamma[j]) for (a, j), n in games.items() if a == i)
            new.append(points[i] / denominator)
        scale = math.exp(sum(map(math.log, new)) / count)
        new = [g / scale for g in new]
        change = max(abs(math.log(a / b)) for a, b in zip(new, gamma, strict=True))
        gamma = new
        if change < 1e-13:
            break
    else:
        raise AssertionError("MM did not converge")
    return centred([ELO_PER_NAT * math.log(g) for g in gamma])


def _bisect(f: Callable[[float], float], lo: float, hi: float) -> float:
    """Root of an increasing function on [lo, hi]."""
    for _ in range(200):
        mid = (lo + hi) / 2
        if f(mid) < 0:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def davidson_coordinates(count: int, counts: Counts) -> tuple[list[float], float]:
    """Davidson's model by exact coordinate-wise maximization (Gauss-Seidel + bisection).

    P(win) : P(draw) : P(loss) = exp(d/2) : nu : exp(-d/2), d = theta_i - theta_j.
    The likelihood equations: each engine's points equal its expected points,
    and the draws equal the expected draws. Returns (Elo, average 0; nu).
    """
    theta = [0.0] * count
    log_nu = 0.0

    def expected_score(d: float, nu: float) -> float:
        return (math.exp(d / 2) + nu / 2) / (math.exp(d / 2) + math.exp(-d / 2) + nu)

    points = [0.0] * count
    for (i, j), (w, d, lo) in counts.items():
        points[i] += w + d / 2
        points[j] += lo + d / 2
    draws = sum(d for _, d, _ in counts.values())
    for _ in range(20_000):
        before = [*theta, log_nu]
        for k in range(count):
            def excess(t: float, k: int = k, nu: float = math.exp(log_nu)) -> float:
                total = 0.0
                for (i, j), (w, d, lo) in counts.items():
                    n = w + d + lo
                    if i == k:
                        total += n * expected_score(t - theta[j], nu)
                    elif j == k:
                        total += n * expected_score(t - theta[i], nu)
                return total - points[k]
            theta[k] = _bisect(excess, -40.0, 40.0)

        def draw_excess(x: float) -> float:
            nu = math.exp(x)
            return sum(
                (w + d + lo) * nu / (2 * math.cosh((theta[i] - theta[j]) / 2) + nu)
                for (i, j), (w, d, lo) in counts.items()
            ) - draws
        log_nu = _bisect(draw_excess, -30.0, 30.0)
        if max(abs(a - b) for a, b in zip(before, [*theta, log_nu], strict=True)) < 1e-12:
            break
    else:
        raise AssertionError("coordinate solve did not converge")
    return centred([ELO_PER_NAT * t for t in theta]), math.exp(log_nu)


def newton_elos(names: list[str], counts: Counts, **options) -> dict[str, float]:
    field = rate(names, counts, RatingOptions(**options))
    return {r.name: r.elo for r in field.ratings}


# --------------------------------------------------------------------------- #
# Data: real tournaments through the real CLI, and simulated fields
# --------------------------------------------------------------------------- #
def guti(*args: str, cwd: Path, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-m", "guti.cli", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, "PYTHONPATH": str(ROOT)})


def reference(name: str, level: int) -> list[str]:
    return ["-engine", f"cmd={PY}", "args=-m guti.engine", f"dir={ROOT}", f"name={name}",
            f"option.Level={level}"]


def bot(name: str, script: str) -> list[str]:
    return ["-engine", f"cmd={PY}", f"args={ROOT / 'bots' / 'python' / script}", f"name={name}"]


def db_counts(*paths: Path) -> tuple[list[str], Counts]:
    """W/D/L per pair of every game in the databases, by engine name, read with sqlite3."""
    names: list[str] = []
    counts: Counts = {}
    for path in paths:
        with sqlite3.connect(path) as conn:
            games = conn.execute("SELECT white, black, result FROM games").fetchall()
        for white, black, result in games:
            for name in (white, black):
                if name not in names:
                    names.append(name)
            i, j = names.index(white), names.index(black)
            score = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}[result]
            if i > j:
                i, j, score = j, i, 1.0 - score
            cell = counts.setdefault((i, j), [0.0, 0.0, 0.0])
            cell[0 if score == 1.0 else 2 if score == 0.0 else 1] += 1
    return names, counts


@pytest.fixture(scope="module")
def field(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    """A real round-robin: the reference engine at Levels 0, 4 and 10 and the greedy bot."""
    folder = tmp_path_factory.mktemp("field")
    done = guti("tournament", *reference("L0", 0), *reference("L4", 4), *reference("L10", 10),
                *bot("greedy", "greedy_bot.py"), "-each", "st=0.05", "-rounds", "2",
                "-games", "2", "-openings", "random:4", "-srand", "11", "-concurrency", "2",
                "-db", "a.db", "-quiet", cwd=folder)
    assert done.returncode == 0, done.stderr
    return folder, done


@pytest.fixture(scope="module")
def second(field) -> Path:
    """A second real tournament sharing one engine (L0) with the first and adding 'random'."""
    folder, _ = field
    done = guti("tournament", *reference("L0", 0), *bot("random", "random_bot.py"),
                "-each", "st=0.05", "-games", "6", "-openings", "random:4", "-srand", "5",
                "-concurrency", "2", "-db", "b.db", "-quiet", cwd=folder)
    assert done.returncode == 0, done.stderr
    return folder / "b.db"


def simulate(true_elo: list[float], games_per_pair: int, rng: random.Random,
             draw_share: float = 0.5, davidson_nu: float | None = None) -> Counts:
    """A round-robin with known ratings: expected score is the logistic Elo expectation,
    and draws take ``draw_share`` of the smaller of the win and loss probabilities; or,
    with ``davidson_nu``, outcomes drawn from Davidson's model."""
    counts: Counts = {}
    for i in range(len(true_elo)):
        for j in range(i + 1, len(true_elo)):
            if davidson_nu is not None:
                half = (true_elo[i] - true_elo[j]) / ELO_PER_NAT / 2
                z = math.exp(half) + math.exp(-half) + davidson_nu
                p_win, p_draw = math.exp(half) / z, davidson_nu / z
            else:
                expected = 1 / (1 + 10 ** ((true_elo[j] - true_elo[i]) / 400))
                p_draw = 2 * draw_share * min(expected, 1 - expected)
                p_win = expected - p_draw / 2
            cell = [0.0, 0.0, 0.0]
            for _ in range(games_per_pair):
                u = rng.random()
                cell[0 if u < p_win else 1 if u < p_win + p_draw else 2] += 1
            counts[(i, j)] = cell
    return counts


def parse_ratings(stdout: str) -> dict[str, tuple[float, float, int]]:
    """Engine -> (Elo, ± 95 %, games) from the printed rating table."""
    block = stdout.split("Ratings (maximum likelihood over all games)", 1)[1]
    block = block.split("Bradley-Terry", 1)[0]
    rows = {}
    for line in block.splitlines():
        cells = [c.strip() for c in re.split(r"[│|]", line) if c.strip()]
        if len(cells) == 8 and cells[0].isdigit():
            rows[cells[1]] = (float(cells[2]), float(cells[3]), int(cells[4]))
    return rows


# --------------------------------------------------------------------------- #
# The solver agrees with independent computations
# --------------------------------------------------------------------------- #
def test_newton_agrees_with_hunter_mm_on_a_real_tournament(field):
    folder, done = field
    names, counts = db_counts(folder / "a.db")
    assert len(names) == 4 and sum(sum(c) for c in counts.values()) == 24
    ours = newton_elos(names, counts)
    mm = hunter_mm(len(names), with_virtual_draws(len(names), counts))
    worst = max(abs(ours[n] - e) for n, e in zip(names, mm, strict=True))
    assert worst < 0.1, (ours, mm)
    print(f"real field, half model: largest Newton - MM difference {worst:.2e} Elo")
    # ... and so does what the tournament printed at its end.
    printed = parse_ratings(done.stdout)
    assert set(printed) == set(names)
    for name, elo in zip(names, mm, strict=True):
        assert abs(printed[name][0] - elo) <= 0.051
    assert "Ratings (maximum likelihood over all games)" in done.stdout
    # The levels really differ in strength, and the list says so.
    assert ours["L10"] > ours["L0"]


def test_davidson_agrees_with_coordinate_solve_on_a_real_tournament(field):
    folder, _ = field
    names, counts = db_counts(folder / "a.db")
    field_list = rate(names, counts, RatingOptions(draw_model="davidson"))
    ours = {r.name: r.elo for r in field_list.ratings}
    theirs, nu = davidson_coordinates(len(names), with_virtual_draws(len(names), counts))
    worst = max(abs(ours[n] - e) for n, e in zip(names, theirs, strict=True))
    assert worst < 0.1
    # Egara-guti games are rarely drawn: with no draw the fit is nu = 0 (the
    # coordinate solve stops at its bracket, nu = e^-30).
    assert field_list.draw_nu == pytest.approx(nu, rel=1e-6, abs=1e-9)
    print(f"real field, Davidson: largest difference {worst:.2e} Elo, nu {nu:.4f}")


@pytest.mark.parametrize("draw_model", ["half", "davidson"])
def test_solvers_agree_on_simulated_fields(draw_model):
    rng = random.Random(2026)
    worst = 0.0
    for size in (3, 5, 8):
        true_elo = [rng.uniform(-300, 300) for _ in range(size)]
        counts = simulate(true_elo, 12, rng)
        names = [f"e{k}" for k in range(size)]
        ours = newton_elos(names, counts, draw_model=draw_model)
        virtual = with_virtual_draws(size, counts)
        if draw_model == "half":
            theirs = hunter_mm(size, virtual)
        else:
            theirs, _ = davidson_coordinates(size, virtual)
        worst = max(worst, *(abs(ours[n] - e) for n, e in zip(names, theirs, strict=True)))
    assert worst < 0.1
    print(f"simulated fields ({draw_model}): largest difference {worst:.2e} Elo")


def test_half_model_reproduces_every_engines_points_without_prior():
    """The defining property of the ML estimate: expected points equal points."""
    rng = random.Random(7)
    counts = simulate([-150, -20, 40, 130], 30, rng)
    names = ["a", "b", "c", "d"]
    elo = newton_elos(names, counts, prior=0.0)
    for k, name in enumerate(names):
        points = expected = 0.0
        for (i, j), (w, d, lo) in counts.items():
            if k not in (i, j):
                continue
            other = names[j if k == i else i]
            e = 1 / (1 + 10 ** ((elo[other] - elo[name]) / 400))
            expected += (w + d + lo) * e
            points += w + d / 2 if k == i else lo + d / 2
        assert expected == pytest.approx(points, abs=1e-6)


# --------------------------------------------------------------------------- #
# The 95 % intervals
# --------------------------------------------------------------------------- #
def coverage(sims: int, true_elo: list[float], games_per_pair: int, seed: int,
             anchor: bool = False, draw_share: float = 0.5,
             davidson_nu: float | None = None) -> float:
    """Share of 95 % intervals that hold the true rating, over ``sims`` round-robins."""
    rng = random.Random(seed)
    names = [f"e{k}" for k in range(len(true_elo))]
    truth = centred(true_elo)
    model = "half" if davidson_nu is None else "davidson"
    inside = total = 0
    for _ in range(sims):
        counts = simulate(true_elo, games_per_pair, rng, draw_share, davidson_nu)
        options = RatingOptions(
            draw_model=model, anchor=(names[0], true_elo[0]) if anchor else None)
        for r in rate(names, counts, options).ratings:
            k = names.index(r.name)
            target = true_elo[k] if anchor else truth[k]
            if anchor and k == 0:
                assert r.elo == pytest.approx(true_elo[0]) and r.margin == 0
                continue
            total += 1
            inside += abs(r.elo - target) <= r.margin
    return inside / total


@pytest.mark.parametrize(
    ("what", "options"),
    [
        ("half, a third drawn, average 0", {}),
        ("half, a third drawn, engine anchor", {"anchor": True}),
        ("half, no draws", {"draw_share": 0.0}),
        ("half, 60% drawn", {"draw_share": 0.9}),
        ("davidson, nu 1", {"davidson_nu": 1.0}),
    ],
)
def test_intervals_cover_the_true_ratings_of_simulated_round_robins(what, options):
    share = coverage(200, [-180, -60, 40, 200], 20, seed=len(what), **options)
    print(f"coverage of 95% intervals ({what}), 200 round-robins: {100 * share:.1f}%")
    assert 0.90 <= share <= 0.99


@pytest.mark.slow
def test_intervals_cover_the_true_ratings_of_larger_fields():
    share = coverage(1000, [-250, -160, -90, -20, 30, 110, 170, 260], 16, seed=3)
    print(f"coverage of 95% intervals, 8 engines, 1000 runs: {100 * share:.1f}%")
    assert 0.93 <= share <= 0.97
    share = coverage(1000, [-250, -160, -90, -20, 30, 110, 170, 260], 16, seed=4,
                     davidson_nu=0.6)
    print(f"coverage of 95% intervals, 8 engines, 1000 runs, Davidson: {100 * share:.1f}%")
    assert 0.93 <= share <= 0.97


# --------------------------------------------------------------------------- #
# Whitewashes, separate groups, anchors, bad options
# --------------------------------------------------------------------------- #
def test_all_wins_and_all_losses_give_finite_ratings():
    counts: Counts = {(0, 1): [10, 0, 0], (0, 2): [10, 0, 0], (1, 2): [5, 2, 3]}
    for model in ("half", "davidson"):
        elo = newton_elos(["top", "mid", "low"], counts, draw_model=model)
        assert all(math.isfinite(e) for e in elo.values())
        assert elo["top"] > elo["mid"] > elo["low"]
    # Without the prior there is no finite estimate: an error, not a hang.
    with pytest.raises(RatingError):
        rate(["top", "mid", "low"], counts, RatingOptions(prior=0.0))


def test_davidson_without_draws_is_bradley_terry_and_the_prior_adds_no_draws():
    counts: Counts = {(0, 1): [7, 0, 3], (0, 2): [9, 0, 1], (1, 2): [6, 0, 4]}
    names = ["a", "b", "c"]
    davidson = rate(names, counts, RatingOptions(draw_model="davidson"))
    assert davidson.draw_nu == 0.0
    half = newton_elos(names, counts)
    for r in davidson.ratings:
        assert r.elo == pytest.approx(half[r.name], abs=1e-9)
    counts[(0, 1)] = [7, 2, 3]  # two real draws in 32 games
    nu = rate(names, counts, RatingOptions(draw_model="davidson")).draw_nu
    assert nu is not None and 0 < nu < 0.2


def test_groups_that_never_met_are_not_rated_together():
    counts: Counts = {(0, 1): [3, 1, 2], (2, 3): [1, 1, 1]}
    with pytest.raises(RatingError, match="2 groups .*a, b; c, d"):
        rate(["a", "b", "c", "d"], counts)
    table = Standings(["a", "b", "c", "d"])
    table.add(0, 1, "1-0", None, None)
    table.add(2, 3, "0-1", None, None)
    assert str(ratings_table(table)).startswith("Ratings not computed: the engines fall into 2")


def test_anchor_moves_the_list_and_measures_intervals_from_the_anchor():
    counts = simulate([-100, 0, 150], 20, random.Random(4))
    names = ["a", "b", "c"]
    free = {r.name: r for r in rate(names, counts).ratings}
    fixed = {r.name: r for r in rate(names, counts, RatingOptions(anchor=("b", 2000))).ratings}
    assert fixed["b"].elo == 2000 and fixed["b"].margin == 0
    for n in names:
        assert fixed[n].elo - fixed["b"].elo == pytest.approx(free[n].elo - free["b"].elo)
    assert fixed["a"].margin > free["a"].margin  # a difference of two uncertain ratings
    with pytest.raises(RatingError, match="'zed' is not one of the engines"):
        rate(names, counts, RatingOptions(anchor=("zed", 0)))
    with pytest.raises(RatingError, match="draw model"):
        rate(names, counts, RatingOptions(draw_model="rao"))


def test_standings_print_includes_the_ratings():
    table = Standings(["x", "y", "z"])
    for white, black, result in [(0, 1, "1-0"), (1, 2, "1/2-1/2"), (2, 0, "0-1"), (1, 0, "0-1")]:
        table.add(white, black, result, None, None)
    out = io.StringIO()
    print_standings(table, make_console(out))
    rows = parse_ratings(out.getvalue())
    # x won all 3 of its games; z drew y and lost to x (0.5/2); y has 0.5/3.
    assert list(rows) == ["x", "z", "y"] and [rows[n][2] for n in "xzy"] == [3, 2, 3]


def test_all_draws_rate_every_engine_0_in_name_order_and_the_idle_engine_last():
    """Equal ratings print as 0.0 (never -0.0) and stand in name order, not in the order
    the fit's last digits happen to give; an engine that has played no game stands after
    every engine that has, even one with 0 points."""
    table = Standings(["d", "c", "b", "a", "idle"])
    for white, black in [(0, 1), (1, 2), (2, 3), (3, 0), (0, 2), (1, 3)]:
        table.add(white, black, "1/2-1/2", None, None)
    out = io.StringIO()
    print_standings(table, make_console(out))
    rows = parse_ratings(out.getvalue())
    assert list(rows) == ["a", "b", "c", "d"] and all(r[0] == 0.0 for r in rows.values())
    assert "-0.0" not in out.getvalue()
    lost = Standings(["winner", "loser", "idle"])
    lost.add(0, 1, "1-0", None, None)
    assert [line.name for line in lost.ranking()] == ["winner", "loser", "idle"]


# --------------------------------------------------------------------------- #
# guti standings DB...
# --------------------------------------------------------------------------- #
def test_standings_merges_databases_by_engine_name(field, second):
    folder, _ = field
    done = guti("standings", "a.db", "b.db", cwd=folder)
    assert done.returncode == 0, done.stderr
    names, counts = db_counts(folder / "a.db", second)
    assert sorted(names) == sorted(["L0", "L4", "L10", "greedy", "random"])
    printed = parse_ratings(done.stdout)
    mm = hunter_mm(len(names), with_virtual_draws(len(names), counts))
    for name, elo in zip(names, mm, strict=True):
        assert abs(printed[name][0] - elo) <= 0.051, (name, printed[name], elo)
    assert printed["L0"][2] == 12 + 6  # its games of both tournaments
    assert printed["random"][2] == 6 and printed["L4"][2] == 12
    assert "30/30 games played" in done.stdout


def test_standings_anchor_and_draw_model_options(field):
    folder, _ = field
    plain = parse_ratings(guti("standings", "a.db", cwd=folder).stdout)
    anchored = guti("standings", "a.db", "-anchor", "L0=1500", "-drawmodel", "davidson",
                    cwd=folder)
    assert anchored.returncode == 0, anchored.stderr
    rows = parse_ratings(anchored.stdout)
    assert rows["L0"][:2] == (1500.0, 0.0)
    assert "Davidson draws" in anchored.stdout and "L0 = 1500" in anchored.stdout
    half = parse_ratings(guti("standings", "a.db", "-anchor", "L0=1500", cwd=folder).stdout)
    for name in plain:
        assert half[name][0] - 1500 == pytest.approx(plain[name][0] - plain["L0"][0], abs=0.11)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["a.db", "-anchor", "nobody=100"], ["-anchor", "nobody"]),
        (["a.db", "-anchor", "L0"], ["-anchor", "NAME=ELO"]),
        (["a.db", "-anchor", "L0=strong"], ["-anchor", "NAME=ELO"]),
        (["a.db", "-drawmodel", "gauss"], ["-drawmodel", "gauss"]),
        (["a.db", "missing.db"], ["missing.db"]),
        (["a.db", "garbage.db"], ["garbage.db"]),
        (["a.db", "./a.db"], ["./a.db", "twice"]),
        (["-anchor", "L0=1"], ["usage"]),
    ],
)
def test_standings_bad_input_is_one_line_and_exit_2(field, args, words):
    folder, _ = field
    (folder / "garbage.db").write_text("this is not a database\n" * 100)
    done = guti("standings", *args, cwd=folder)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("guti standings: "), done.stderr
    for word in words:
        assert word in lines[0]
    assert done.stdout == ""
    assert not (folder / "missing.db").exists()  # reading never creates a database
