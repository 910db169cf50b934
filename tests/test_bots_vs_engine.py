"""Every bundled bot plays ``guti match`` games against the reference engine: 1 per game
in the fast tier, 10 per game (each colour five times) in the slow tier.

Why: the bots' own tests drive them one command at a time; this is what a
user sees of them. Each bot (built from source where
it needs building) plays Egara-guti and Pretwa games against
``python -m guti.engine`` through the ``guti`` command in a subprocess, and the
PDN file the referee wrote must show every game ended by a rule of the game:
no illegal move, no protocol error, no crash or disconnect, no time forfeit,
no stall. Every game is also replayed with the rules core, which must reach
a finished position with the recorded result and reason.

The matches run in parallel (a thread pool over subprocesses) and are short:
the engine plays at ``Level=3`` (depth cap 2), random two-ply openings give
the games variety, and a 10 s + 0.1 s clock is far above what any bot needs,
so only a real fault can end a game early. (``guti check`` on every bot is
in test_check.py; the bots' perft against the reference figures in their own tests.)
"""

from __future__ import annotations

import shlex
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from guti.referee.game.pdn_reader import PdnGame
from guti.referee.game.reasons import Reason
from guti.rules import Board
from tests.conftest import BOT_NAMES, ENGINE_ARGV, GUTI, ROOT, argv_of_bot_or_reason, parse_pdn

#: One worker runs this module: its module fixture (real runs) then happens once, not per worker.
pytestmark = pytest.mark.xdist_group("bots_vs_engine")

GAMES = ("egara-guti", "pretwa")
MATCH_TIMEOUT = 180.0  # seconds: a hard bound per match; they take a few seconds
WORKERS = 3  # the machine has 2 cores and is shared


@dataclass
class MatchRun:
    """What one ``guti match`` left behind: its exit status, output and files."""

    argv: list[str]
    returncode: int | None  # None: the match did not finish within MATCH_TIMEOUT
    stdout: str
    stderr: str
    pdn: str
    log: Path

    def explain(self) -> str:
        """The tail of the traffic log, for a failure message."""
        tail = self.log.read_text(errors="replace").splitlines()[-15:] if self.log.exists() else []
        return "\n".join([shlex.join(self.argv), self.stderr.strip(), *tail])


def _engine_args(name: str, argv: list[str], seed: int) -> list[str]:
    return [
        "-engine", f"cmd={argv[0]}", f"args={shlex.join(argv[1:])}", f"name={name}",
        f"option.Seed={seed}",
    ]  # fmt: skip


def _play(bot: str, argv: list[str], game: str, seed: int, folder: Path,
          games: int) -> MatchRun:
    pdn, log = folder / f"{bot}-{game}.pdn", folder / f"{bot}-{game}.log"
    cmd = [
        *GUTI, "match",
        *_engine_args(bot, argv, seed),
        *_engine_args("Ref", ENGINE_ARGV, seed), "option.Level=3", f"dir={ROOT}",
        "-each", "tc=10+0.1",
        "-game", game, "-games", str(games),
        "-openings", "plies=2", "order=random", "-srand", str(seed),
        "-pdnout", f"file={pdn}", "-log", f"file={log}",
    ]  # fmt: skip
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, timeout=MATCH_TIMEOUT, cwd=folder
        )
        code, out, err = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as exc:
        code, out, err = None, str(exc.stdout or ""), f"timed out after {MATCH_TIMEOUT:g} s"
    return MatchRun(cmd, code, out, err, pdn.read_text() if pdn.exists() else "", log)


@pytest.fixture(scope="module")
def bot_argvs(request: pytest.FixtureRequest) -> dict[str, list[str] | str]:
    """Each bot's command line (built first where needed), or why it cannot run."""
    return {bot: argv_of_bot_or_reason(request, bot) for bot in BOT_NAMES}


@pytest.fixture(scope="module", params=[pytest.param(1, id="1-game"),
                                        pytest.param(10, id="10-games", marks=pytest.mark.slow)])
def games_per_match(request: pytest.FixtureRequest) -> int:
    """Games of each match (per bot and game): one in the fast tier, ten (each colour five
    times) in the slow tier."""
    return int(request.param)


@pytest.fixture(scope="module")
def matches(
    bot_argvs: dict[str, list[str] | str], tmp_path_factory: pytest.TempPathFactory,
    games_per_match: int,
) -> dict[str, dict[str, MatchRun]]:
    """Each runnable bot's two matches (bot -> game -> run).

    All matches are started together so that the whole module costs about as
    long as its slowest bots, not the sum of them.
    """
    folder = tmp_path_factory.mktemp("bots_vs_engine")
    jobs = [
        (bot, game) for bot, argv in bot_argvs.items() if isinstance(argv, list) for game in GAMES
    ]
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        futures = {
            (bot, game): pool.submit(_play, bot, bot_argvs[bot], game, seed, folder,
                                     games_per_match)
            for seed, (bot, game) in enumerate(jobs, 1)
        }
    found: dict[str, dict[str, MatchRun]] = {}
    for (bot, game), future in futures.items():
        found.setdefault(bot, {})[game] = future.result()
    return found


def _argv_or_skip(bot_argvs: dict[str, list[str] | str], bot: str) -> list[str]:
    argv = bot_argvs[bot]
    if isinstance(argv, str):
        pytest.skip(argv)
    return argv


def _replay(game: str, record: PdnGame) -> None:
    """Replay the recorded moves: all legal, and the end is the recorded one."""
    board = Board(game)
    for move in record.move_texts:
        board.push_str(move)  # raises on an illegal move
    outcome = board.outcome()
    assert outcome is not None, f"game {record.tags['Round']} stops in a running position"
    assert (outcome.result, outcome.reason) == (record.tags["Result"], record.tags["Termination"])
    assert record.result == record.tags["Result"]
    assert record.tags["PlyCount"] == str(len(record.moves))


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("bot", BOT_NAMES)
def test_bot_plays_the_reference_engine_without_a_fault(
    bot_argvs: dict[str, list[str] | str],
    matches: dict[str, dict[str, MatchRun]],
    games_per_match: int,
    bot: str,
    game: str,
) -> None:
    _argv_or_skip(bot_argvs, bot)
    run = matches[bot][game]
    assert run.returncode == 0, run.explain()
    lines = run.stdout.strip().splitlines()
    assert len(lines) == games_per_match + 2, run.stdout
    assert lines.pop().startswith("Elapsed: "), run.stdout
    assert lines[-1].startswith(f"Score of {bot} vs Ref: ") and lines[-1].endswith(
        f", {games_per_match} games"
    ), lines[-1]
    records = parse_pdn(run.pdn)
    assert len(records) == games_per_match, run.explain()
    for i, record in enumerate(records):
        tags = record.tags
        assert (tags["White"], tags["Black"]) == ((bot, "Ref") if i % 2 == 0 else ("Ref", bot))
        assert tags["GameType"] == game and tags["TimeControl"] == "10+0.1"
        reason = Reason.parse(tags["Termination"])
        assert reason.is_rule, f"game {i + 1}: {reason}: {record.notes}\n{run.explain()}"
        assert record.notes == [], record.notes  # a fault note is written only for a fault
        _replay(game, record)
    # The bot played real moves in every game, not only the book.
    assert all(len(r.moves) > 2 for r in records)
