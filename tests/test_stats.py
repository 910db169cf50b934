"""Tests for guti.referee.stats.stats against published numbers and independent closed forms.

Every expected value below is either printed by another tool (cutechess-cli,
fastchess, a fishtest run) in a public document named in the comment, or is
computed in the test itself from a textbook formula, never taken from
guti.referee.stats.stats output.
"""

from __future__ import annotations

import json
import math

import pytest

from guti.referee.stats.sprt import (
    MAX_SPRT_ELO,
    SprtState,
    sprt_bounds,
    sprt_decision,
    sprt_llr,
)
from guti.referee.stats.stats import (
    NELO_PER_T,
    draw_ratio,
    elo_to_score,
    format_elo,
    los,
    pair_bin,
    pentanomial_elo,
    score_elo,
    score_to_elo,
)

# --------------------------------------------------------------------------- #
# cutechess-cli "Elo difference: X +/- Y, LOS: Z %, DrawRatio: D %" lines.
# cutechess prints "Score of A vs B: W - L - D", i.e. wins, LOSSES, draws.
# Sources:
#   (149,133,1718) "Rawr" engine changelog, v0.1.0 match vs Random:
#       "Elo difference: 2.8 +/- 5.7, LOS: 83.0 %, DrawRatio: 85.9 %"
#   (331,275,394)  "100 Elo Chess Engine" README vs Stash v15.0:
#       "Elo difference: 19.5 +/- 16.8, LOS: 98.9 %, DrawRatio: 39.4 %"
#   (386,138,476)  engine changelog "Version v05" (v04-checkext vs v05-pv):
#       "Elo difference: 88.0 +/- 15.6  LOS: 100.0 %  DrawRatio: 47.6 %"
#   (99,97,104)    PS-Wizard/OopsMate archive/data/results/v16_lazysmp.md, vs Sayuri:
#       "Elo difference: 2.3 +/- 31.8, LOS: 55.7 %, DrawRatio: 34.7 %"
#   (45,37,18)     same file, vs SF-2100:
#       "Elo difference: 27.9 +/- 62.4, LOS: 81.2 %, DrawRatio: 18.0 %"
# cutechess computes the 97.5% quantile with an approximate erf^-1 (Winitzki's
# formula, ~1.9572 instead of 1.959964), so its margins are up to ~0.15% smaller
# than ours; the margin tolerance below (0.1 Elo + rounding) allows for that.
# --------------------------------------------------------------------------- #
CUTECHESS_LINES = [
    # wins, losses, draws, elo, margin, los %, draw ratio %
    (149, 133, 1718, 2.8, 5.7, 83.0, 85.9),
    (331, 275, 394, 19.5, 16.8, 98.9, 39.4),
    (386, 138, 476, 88.0, 15.6, 100.0, 47.6),
    (99, 97, 104, 2.3, 31.8, 55.7, 34.7),
    (45, 37, 18, 27.9, 62.4, 81.2, 18.0),
]


@pytest.mark.parametrize("w,ls,d,elo,margin,los_pct,dr_pct", CUTECHESS_LINES)
def test_matches_cutechess_output(w, ls, d, elo, margin, los_pct, dr_pct):
    est = score_elo(w, d, ls)
    assert est.elo == pytest.approx(elo, abs=0.05 + 1e-9)
    assert est.margin == pytest.approx(margin, abs=0.05 + 0.1)
    assert los(w, d, ls) * 100 == pytest.approx(los_pct, abs=0.05 + 1e-9)
    assert draw_ratio(w, d, ls) * 100 == pytest.approx(dr_pct, abs=0.05 + 1e-9)
    assert est.n == w + d + ls


def test_60_20_20_by_hand():
    # 60 wins, 20 draws, 20 losses: score 0.7 -> Elo = -400 log10(1/0.7 - 1).
    # Per-game variance: 0.6*0.3^2 + 0.2*0.2^2 + 0.2*0.7^2 = 0.054 + 0.008 + 0.098 = 0.16,
    # standard error sqrt(0.16/100) = 0.04, score interval 0.7 -/+ 1.959964*0.04.
    est = score_elo(60, 20, 20)
    assert est.score == pytest.approx(0.7)
    assert est.elo == pytest.approx(-400 * math.log10(1 / 0.7 - 1))  # 147.19...
    lo, hi = 0.7 - 1.959964 * 0.04, 0.7 + 1.959964 * 0.04
    to_elo = lambda s: -400 * math.log10(1 / s - 1)  # noqa: E731
    assert est.lower == pytest.approx(to_elo(lo))
    assert est.upper == pytest.approx(to_elo(hi))
    assert est.margin == pytest.approx((to_elo(hi) - to_elo(lo)) / 2)
    # nElo = (s - 1/2) / sigma * 800/ln10 with sigma = 0.4
    assert est.nelo == pytest.approx(0.2 / 0.4 * 800 / math.log(10))
    # The interval is asymmetric in Elo: wider above than below for s > 1/2.
    assert est.upper - est.elo > est.elo - est.lower


def test_even_score_is_zero_elo_and_half_los():
    for w, d, ls in [(0, 10, 0), (5, 0, 5), (37, 12, 37)]:
        assert score_elo(w, d, ls).elo == pytest.approx(0.0, abs=1e-12)
        assert los(w, d, ls) == 0.5
    # LOS ignores draws (cutechess formula): only w - l and w + l matter.
    assert los(10, 0, 4) == los(10, 500, 4)
    # Closed form, 10 wins 4 losses: 0.5 * (1 + erf(6 / sqrt(28))).
    assert los(10, 0, 4) == pytest.approx(0.5 * (1 + math.erf(6 / math.sqrt(28))))
    # Antisymmetry: swapping sides mirrors Elo and LOS.
    assert score_elo(4, 3, 10).elo == pytest.approx(-score_elo(10, 3, 4).elo)
    assert los(4, 3, 10) == pytest.approx(1 - los(10, 3, 4))


def test_whitewash_is_infinite_not_a_crash():
    allwin = score_elo(12, 0, 0)
    assert allwin.elo == math.inf and allwin.margin == math.inf
    allloss = score_elo(0, 0, 7)
    assert allloss.elo == -math.inf and allloss.margin == math.inf
    # Finite estimate but an interval end beyond 100%: upper end is +inf.
    near = score_elo(9, 1, 0)
    assert math.isfinite(near.elo) and near.upper == math.inf and near.margin == math.inf
    assert score_to_elo(0.0) == -math.inf and score_to_elo(1.0) == math.inf
    # LOS stays a finite probability: 0.5 * (1 + erf(12 / sqrt(24))).
    assert los(12, 0, 0) == pytest.approx(0.5 * (1 + math.erf(12 / math.sqrt(24))))


def test_no_games():
    est = score_elo(0, 0, 0)
    assert math.isnan(est.elo) and math.isnan(est.margin) and est.n == 0
    assert math.isnan(draw_ratio(0, 0, 0))
    assert los(0, 0, 0) == 0.5
    assert format_elo(est.elo, est.margin) == "n/a"


def test_elo_score_roundtrip():
    # Textbook logistic model: +400 Elo means odds 10:1, i.e. score 10/11.
    assert elo_to_score(400) == pytest.approx(10 / 11)
    assert score_to_elo(10 / 11) == pytest.approx(400)
    assert elo_to_score(0) == 0.5
    for elo in (-300.0, -12.5, 0.0, 7.0, 250.0):
        assert score_to_elo(elo_to_score(elo)) == pytest.approx(elo)


@pytest.mark.parametrize(
    "args",
    [(-1, 0, 0), (1.5, 0, 0), ("3", 0, 0), (True, 0, 0), (0, None, 0)],
)
def test_bad_counts_are_clear_errors(args):
    with pytest.raises(ValueError) as err:
        score_elo(*args)
    msg = str(err.value)
    assert "\n" not in msg and "non-negative integer" in msg
    with pytest.raises(ValueError):
        los(*args)
    with pytest.raises(ValueError):
        draw_ratio(*args)


# --------------------------------------------------------------------------- #
# Pentanomial
# --------------------------------------------------------------------------- #
def test_each_pair_score_has_its_pentanomial_bin():
    assert [pair_bin(score) for score in (0, 0.5, 1, 1.0, 1.5, 2)] == [0, 1, 2, 2, 3, 4]
    for bad in (0.75, "2", True, 2.5, -0.5):
        with pytest.raises(ValueError, match=r"one of 0, 0\.5, 1, 1\.5, 2, not "):
            pair_bin(bad)  # type: ignore[arg-type]


# fastchess match reports, which print the pentanomial Elo whenever pentanomial
# reporting is on (its default). Lines copied from the documents named:
#   Toudonou/zeno docs/testing.md, "History Heuristic" (vs develop):
#     Elo: 7.12 +/- 8.57, nElo: 8.95 +/- 10.77; Games 4000 W 1585 L 1503 D 912;
#     Ptnml(0-2): [224, 309, 874, 347, 246]; LLR: 0.53 (-2.25, 2.89) [0.00, 2.00]
#   same, "History Heuristic" (vs Zeno 1.0):
#     Elo: 30.92 +/- 8.87, nElo: 37.74 +/- 10.77; W 1692 L 1337 D 971;
#     Ptnml(0-2): [183, 319, 779, 398, 321]; LLR: 2.08 (-2.25, 2.89) [15.00, 18.00]
#   same, "Bishop pair":
#     Elo: 10.00 +/- 5.16, nElo: 12.56 +/- 6.48; W 4138 L 3820 D 3090;
#     Ptnml(0-2): [531, 1096, 2084, 1150, 663]; LLR: 4.60 (-4.60, 4.60) [0.00, 5.00]
#   same, "Lazy SMP":
#     Elo: 184.24 +/- 28.56, nElo: 239.69 +/- 30.89; W 311 L 75 D 100;
#     Ptnml(0-2): [4, 14, 58, 76, 91]; LLR: 4.63 (-4.60, 4.60) [150.00, 180.00]
#   same, "Refactoring + resetting the transposition table":
#     Elo: 1.58 +/- 2.42, nElo: 2.12 +/- 3.25; W 15393 L 15193 D 13410;
#     Ptnml(0-2): [1909, 4418, 9199, 4508, 1964]; LLR: 4.60 (-4.60, 4.60) [-11.00, -10.00]
#   a fastchess report in a chess-engine project's notes ("C1-Original vs C5-Rebuild"):
#     Elo: 190.85 +/- 65.54, nElo: 549.34 +/- 152.27; W 10 L 0 D 10;
#     Ptnml(0-2): [0, 0, 1, 8, 1]; LLR: 1.24 (-2.94, 2.94) [0.00, 50.00]
#     (empty bins: exercises the 1e-3 regularization)
#   a Stockfish-WASM build README, "sf19-smallnet vs sf18-lite" (no SPRT):
#     Elo: 72.85 +/- 22.33, nElo: 132.30 +/- 39.32; W 78 L 16 D 206;
#     Ptnml(0-2): [1, 10, 78, 48, 13]
# fastchess's SPRT model defaults to "normalized", so the bounds are nElo.
FASTCHESS_REPORTS = [
    # penta, (w, d, l), elo, margin, nelo, nelo_margin, (elo0, elo1, llr) or None
    ([224, 309, 874, 347, 246], (1585, 912, 1503), 7.12, 8.57, 8.95, 10.77, (0, 2, 0.53)),
    ([183, 319, 779, 398, 321], (1692, 971, 1337), 30.92, 8.87, 37.74, 10.77, (15, 18, 2.08)),
    ([531, 1096, 2084, 1150, 663], (4138, 3090, 3820), 10.00, 5.16, 12.56, 6.48, (0, 5, 4.60)),
    ([4, 14, 58, 76, 91], (311, 100, 75), 184.24, 28.56, 239.69, 30.89, (150, 180, 4.63)),
    (
        [1909, 4418, 9199, 4508, 1964],
        (15393, 13410, 15193),
        1.58,
        2.42,
        2.12,
        3.25,
        (-11, -10, 4.60),
    ),
    ([0, 0, 1, 8, 1], (10, 10, 0), 190.85, 65.54, 549.34, 152.27, (0, 50, 1.24)),
    ([1, 10, 78, 48, 13], (78, 206, 16), 72.85, 22.33, 132.30, 39.32, None),
]


@pytest.mark.parametrize("penta,wdl,elo,margin,nelo,nmargin,sprt", FASTCHESS_REPORTS)
def test_matches_fastchess_reports(penta, wdl, elo, margin, nelo, nmargin, sprt):
    half = 0.005 + 1e-9  # values printed with 2 decimals
    est = pentanomial_elo(penta)
    assert est.n == sum(penta) and 2 * est.n == sum(wdl)
    assert est.elo == pytest.approx(elo, abs=half)
    assert est.margin == pytest.approx(margin, abs=half)
    assert est.nelo == pytest.approx(nelo, abs=half)
    assert est.nelo_margin == pytest.approx(nmargin, abs=half)
    # Same games, same point estimate as the trinomial view.
    assert score_elo(*wdl).elo == pytest.approx(est.elo)
    if sprt is not None:
        elo0, elo1, llr = sprt
        assert sprt_llr(elo0, elo1, pentanomial=penta) == pytest.approx(llr, abs=half)


# fishtest runs (normalized-Elo bounds, pentanomial LLR, alpha = beta = 0.05):
#   fishtest's own run-schema benchmark fixture (a finished, rejected run):
#     "LLR: -2.94 (-2.94,2.94) <0.00,2.00>", "Ptnml(0-2): 369, 12695, 27124, 12664, 332"
#     fishtest stopped this run at -2.937 because it narrows the bounds by an
#     estimated overshoot (Siegmund's correction, stat_util.update_SPRT); plain
#     Wald bounds, which we use (as fastchess does), would keep playing.
#   a Stockfish commit-message example in an engine fork's contributing guide:
#     "LLR: 2.93 (-2.94,2.94) <0.00,2.00>", "Ptnml(0-2): 372, 17511, 39320, 17934, 399"
FISHTEST_RUNS = [
    ([369, 12695, 27124, 12664, 332], 0.0, 2.0, -2.94, None),  # -2.937 > -2.944
    ([372, 17511, 39320, 17934, 399], 0.0, 2.0, 2.93, None),  # 2.93 < 2.944: not yet
]


@pytest.mark.parametrize("penta,elo0,elo1,llr,decision", FISHTEST_RUNS)
def test_matches_fishtest_runs(penta, elo0, elo1, llr, decision):
    got = sprt_llr(elo0, elo1, pentanomial=penta, model="normalized")
    assert got == pytest.approx(llr, abs=0.005 + 1e-9)
    state = SprtState.evaluate(elo0, elo1, 0.05, 0.05, pentanomial=penta)
    assert state.llr == got and state.decision == decision


def test_pentanomial_rejects_bad_input():
    with pytest.raises(ValueError, match="5 counts"):
        pentanomial_elo([1, 2, 3])
    with pytest.raises(ValueError, match=r"pentanomial\[2\] \(DD\+WL\)"):
        pentanomial_elo([1, 2, -3, 4, 5])
    assert math.isnan(pentanomial_elo([0, 0, 0, 0, 0]).elo)


# --------------------------------------------------------------------------- #
# SPRT
# --------------------------------------------------------------------------- #
def test_sprt_bounds():
    # Wald: log(beta/(1-alpha)) and log((1-beta)/alpha); alpha = beta = 0.05 gives
    # the +/-2.94 printed in every fishtest and cutechess SPRT line.
    lower, upper = sprt_bounds(0.05, 0.05)
    assert lower == pytest.approx(-math.log(19)) and upper == pytest.approx(math.log(19))
    assert round(lower, 3) == -2.944 and round(upper, 3) == 2.944
    # alpha = 0.05, beta = 0.1: "(-2.25, 2.89)" in the Zeno reports above.
    lower, upper = sprt_bounds(0.05, 0.1)
    assert (round(lower, 2), round(upper, 2)) == (-2.25, 2.89)
    # alpha = beta = 0.01: "(-4.60, 4.60)".
    assert [round(b, 2) for b in sprt_bounds(0.01, 0.01)] == [-4.6, 4.6]
    for bad in [(0, 0.05), (0.05, 1), (0.6, 0.5), (-0.1, 0.05), (float("nan"), 0.05)]:
        with pytest.raises(ValueError):
            sprt_bounds(*bad)


def test_sprt_decision():
    assert sprt_decision(2.95, 0.05, 0.05) == "H1"
    assert sprt_decision(-2.95, 0.05, 0.05) == "H0"
    assert sprt_decision(0.0, 0.05, 0.05) is None
    assert sprt_decision(2.9, 0.05, 0.05) is None
    assert sprt_decision(math.nan, 0.05, 0.05) is None


def test_trinomial_logistic_llr_published():
    # README of an SPRT/GSPRT explainer script (sample usage):
    #   "sprt.py --wins 4307 --losses 4063 --draws 8620 --elo0 0 --elo1 3 --gsprt
    #    > LLR: 2.99 (-2.94, 2.94)  > H1 Accepted"  (logistic-Elo GSPRT)
    llr = sprt_llr(0, 3, wdl=(4307, 8620, 4063), model="logistic")
    assert llr == pytest.approx(2.99, abs=0.005)
    assert sprt_decision(llr, 0.05, 0.05) == "H1"


def _gsprt_logistic_alt2(w, d, ls, elo0, elo1):
    """Van den Bergh's Brownian approximation (GSPRT_approximation.pdf, fishtest
    LLRcalc.LLR_alt2): N * (s1 - s0) * (2s - s0 - s1) / (2 var)."""
    n = w + d + ls
    s = (w + d / 2) / n
    var = (w * (1 - s) ** 2 + d * (0.5 - s) ** 2 + ls * s**2) / n
    s0, s1 = (1 / (1 + 10 ** (-e / 400)) for e in (elo0, elo1))
    return n * (s1 - s0) * (2 * s - s0 - s1) / var / 2


def _gsprt_normalized_alt(w, d, ls, nelo0, nelo1):
    """Van den Bergh's approximation (normalized_elo_practical.pdf section 4.2,
    fishtest LLRcalc.LLR_normalized_alt): N/2 * log((1+(t-t0)^2)/(1+(t-t1)^2))."""
    n = w + d + ls
    s = (w + d / 2) / n
    var = (w * (1 - s) ** 2 + d * (0.5 - s) ** 2 + ls * s**2) / n
    t = (s - 0.5) / math.sqrt(var)
    t0, t1 = nelo0 / NELO_PER_T, nelo1 / NELO_PER_T
    return n / 2 * math.log((1 + (t - t0) ** 2) / (1 + (t - t1) ** 2))


@pytest.mark.parametrize("w,d,ls", [(4307, 8620, 4063), (26829, 52605, 26934), (5200, 9000, 4900)])
def test_trinomial_llr_agrees_with_closed_form_approximations(w, d, ls):
    # The exact GSPRT and its published approximations agree to within a few
    # percent of the LLR for large samples with small Elo differences.
    exact = sprt_llr(0, 3, wdl=(w, d, ls), model="logistic")
    approx = _gsprt_logistic_alt2(w, d, ls, 0, 3)
    assert exact == pytest.approx(approx, rel=0.02, abs=0.02)
    exact = sprt_llr(0, 4, wdl=(w, d, ls), model="normalized")
    approx = _gsprt_normalized_alt(w, d, ls, 0, 4)
    assert exact == pytest.approx(approx, rel=0.02, abs=0.02)


def test_llr_zero_for_no_games_and_antisymmetric():
    assert sprt_llr(0, 5, wdl=(0, 0, 0)) == 0.0
    assert sprt_llr(0, 5, pentanomial=[0, 0, 0, 0, 0]) == 0.0
    # A result exactly between the hypotheses favours neither: swapping the
    # player's sides and the hypotheses (elo -> -elo) negates nothing else.
    a = sprt_llr(-5, 5, wdl=(300, 400, 300), model="logistic")
    assert a == pytest.approx(0.0, abs=1e-9)
    b = sprt_llr(-5, 5, pentanomial=[30, 200, 500, 200, 30])
    assert b == pytest.approx(0.0, abs=1e-9)
    # Mirror symmetry: LLR(elo0, elo1; result) = -LLR(-elo1, -elo0; mirrored result).
    x = sprt_llr(0, 5, wdl=(320, 400, 280))
    y = sprt_llr(-5, 0, wdl=(280, 400, 320))
    assert x == pytest.approx(-y, abs=1e-9)


def test_lopsided_early_results_do_not_crash():
    for wdl in [(10, 0, 0), (0, 0, 10), (0, 10, 0), (1, 0, 0)]:
        for model in ("normalized", "logistic"):
            assert math.isfinite(sprt_llr(0, 5, wdl=wdl, model=model))
    for penta in ([0, 0, 0, 0, 10], [10, 0, 0, 0, 0], [0, 0, 10, 0, 0]):
        for model in ("normalized", "logistic"):
            assert math.isfinite(sprt_llr(0, 5, pentanomial=penta, model=model))
    assert sprt_llr(0, 5, wdl=(10, 0, 0)) > 0 > sprt_llr(0, 5, wdl=(0, 0, 10))


def _counts_grid(n: int) -> list[tuple[int, ...]]:
    """Every mix of empty, tiny, even and huge classes of ``n`` outcome counts."""
    import itertools

    sizes = [0, 1, 7, 100_000] if n == 3 else [0, 1, 300]
    return list(itertools.product(sizes, repeat=n))


@pytest.mark.parametrize("model", ["normalized", "logistic"])
def test_sprt_within_the_largest_bounds_is_finite_for_any_counts(model):
    """Up to MAX_SPRT_ELO (what ``-sprt`` accepts) the fit exists for any results: the
    LLR is a real number, and lopsided results still lean the right way."""
    most = MAX_SPRT_ELO[model]
    for elo0, elo1 in [(0.0, most), (-most, 0.0), (-most, most), (most - 1, most)]:
        for wdl in _counts_grid(3):
            assert math.isfinite(sprt_llr(elo0, elo1, wdl=wdl, model=model))
        for penta in _counts_grid(5):
            assert math.isfinite(sprt_llr(elo0, elo1, pentanomial=penta, model=model))
    assert sprt_llr(0, most, wdl=(0, 0, 1000), model=model) < 0
    assert sprt_llr(-most, 0, wdl=(1000, 0, 0), model=model) > 0


@pytest.mark.parametrize("model, elo1", [("normalized", 1000.0), ("logistic", 20000.0)])
def test_sprt_past_any_fit_is_no_evidence_never_an_error(model, elo1):
    """A hypothesis no distribution near the results reaches (fishtest asserts there)
    gives LLR 0: no decision yet, the run plays on, where it used to raise mid-run."""
    for wdl in [(3, 4, 5), (0, 0, 10), (10, 0, 0)]:
        state = SprtState.evaluate(0.0, elo1, wdl=wdl, model=model)
        assert state.llr == 0.0 and state.decision is None

def test_sprt_llr_argument_errors():
    with pytest.raises(ValueError, match="exactly one"):
        sprt_llr(0, 5)
    with pytest.raises(ValueError, match="exactly one"):
        sprt_llr(0, 5, wdl=(1, 1, 1), pentanomial=[1, 1, 1, 1, 1])
    with pytest.raises(ValueError, match="elo0 must be less than elo1"):
        sprt_llr(5, 0, wdl=(1, 1, 1))
    with pytest.raises(ValueError, match="model"):
        sprt_llr(0, 5, wdl=(1, 1, 1), model="bayesian")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"wdl must be \(wins, draws, losses\)"):
        sprt_llr(0, 5, wdl=(1, 1))


# --------------------------------------------------------------------------- #
# Formatting
# --------------------------------------------------------------------------- #
def test_format_elo():
    assert format_elo(35.24, 20.06) == "+35.2 ± 20.1"
    assert format_elo(-7.0, 3.0) == "-7.0 ± 3.0"
    assert format_elo(-0.01, 5.0) == "+0.0 ± 5.0"
    assert format_elo(12.346, 6.789, digits=2) == "+12.35 ± 6.79"
    assert format_elo(math.inf, math.inf) == "+inf ± inf"
    assert format_elo(-math.inf, math.inf) == "-inf ± inf"
    assert format_elo(math.nan, math.nan) == "n/a"
    est = score_elo(60, 20, 20)
    assert format_elo(est.elo, est.margin) == f"+{est.elo:.1f} ± {est.margin:.1f}"


def test_one_pair_or_one_game_has_no_interval():
    """One W+L pair (or one game) has no spread to measure: its interval is n/a, never an
    exact-looking ``± 0.0`` (cutechess prints ``+/- nan``). Two equal pairs are zero spread
    measured, and say so."""
    one_pair = pentanomial_elo([0, 0, 1, 0, 0])
    assert format_elo(one_pair.elo, one_pair.margin) == "+0.0 ± n/a"
    one_game = score_elo(1, 0, 0)
    assert math.isnan(one_game.margin) and math.isnan(one_game.nelo_margin)
    two_pairs = pentanomial_elo([0, 0, 2, 0, 0])
    assert format_elo(two_pairs.elo, two_pairs.margin) == "+0.0 ± 0.0"


def _pairs(table, counts: list[int], first_pair: int = 0) -> int:
    """Add pairs to ``table`` by pentanomial counts (engine 0's points in a pair: 0, 0.5,
    1, 1.5, 2), each pair two games with the colours reversed; the next free pair number."""
    games = {0: ("0-1", "1-0"), 1: ("0-1", "1/2-1/2"), 2: ("1/2-1/2", "1/2-1/2"),
             3: ("1-0", "1/2-1/2"), 4: ("1-0", "0-1")}  # engine 0 white first, then black
    pair = first_pair
    for points, count in enumerate(counts):
        for _ in range(count):
            first, second = games[points]
            table.add(0, 1, first, "no legal move", None, pair)
            table.add(1, 0, second, "no legal move", None, pair)
            pair += 1
    return pair


def test_an_sprt_decision_stands_when_the_games_running_at_the_stop_move_the_llr() -> None:
    """A run stops when the LLR crosses a bound, and the games still running are then
    stored and counted: one more pair can bring the LLR back inside. The decision stands
    as taken (a finished test stays finished, as fishtest's do), and the line says where
    the LLR is with every pair."""
    from guti.referee.stats.sprt import SprtSpec
    from guti.referee.stats.standings import Standings

    table = Standings(["a", "b"], sprt=SprtSpec(elo0=0, elo1=10))
    after = _pairs(table, [0, 60, 215, 60, 30])
    state = table.sprt_state()
    assert state is not None and state.decision == "H1" and state.llr >= state.upper
    table.sprt_decided = state  # as the run keeps it when it stops
    _pairs(table, [1, 0, 0, 0, 0], after)  # a pair that was running: lost twice
    now = table.current_sprt_state()
    assert now is not None and now.decision is None and now.llr < state.upper
    assert table.sprt_state() is state
    line = table.sprt_line()
    assert line is not None and line.endswith(
        f"LLR {state.llr:.2f} [-2.94, 2.94] H1 accepted (LLR {now.llr:.2f} with the pairs "
        "finished after the decision)"), line
    # another test of the same games (guti standings -sprt ...) is evaluated on them all
    table.sprt = SprtSpec(elo0=0, elo1=5)
    assert table.sprt_state() == table.current_sprt_state()


def test_a_kept_decision_that_is_damaged_is_no_decision() -> None:
    """The row is read from a file anyone can change: anything that is not a decision its
    own LLR makes is None (the SPRT is then evaluated on every pair), never an error."""
    from guti.referee.stats.sprt import SprtSpec, SprtState, kept_decision

    good = SprtState.evaluate(0, 10, pentanomial=[0, 60, 215, 60, 30]).to_json()
    assert kept_decision(json.dumps(good)) == SprtState.from_json(good)
    assert kept_decision(json.dumps(good)).of(SprtSpec(0, 10))
    for damaged in ("[" * 100_000, "not json", "null", "{}", json.dumps({**good, "model": [1]}),
                    json.dumps({**good, "llr": -5.0}), json.dumps({**good, "decision": "H2"}),
                    '{"elo0": 1' + "0" * 400 + ', "elo1": 10, "alpha": 0.05, "beta": 0.05, '
                    '"model": "normalized", "llr": 3, "decision": "H1"}',
                    json.dumps({**good, "alpha": 0.96})):  # alpha + beta past 1
        assert kept_decision(damaged) is None, damaged[:80]


def test_the_reports_llr_path_follows_every_pair_once_a_decision_is_kept() -> None:
    """The chart of the LLR is the path the games made, not the kept decision's LLR
    repeated (a database read after its run decided)."""
    from guti.referee.stats.sprt import SprtSpec, SprtState
    from guti.referee.web.data import Tally

    tally = Tally(["a", "b"], "roundrobin", SprtSpec(elo0=0, elo1=10))
    tally.standings.sprt_decided = SprtState.evaluate(0, 10, pentanomial=[0, 60, 215, 60, 30])
    _pairs(tally, [0, 2, 3, 2, 1])
    llrs = {llr for _, llr in tally.sprt_path}
    assert len(llrs) > 1 and all(abs(llr) < 2.94 for llr in llrs), tally.sprt_path
