"""The one settings model: match and tournament share game settings and the scheduler."""

from __future__ import annotations

import ast
import pathlib

from guti.referee.config.args import parse_cli
from guti.referee.config.given import GivenOptions
from guti.referee.config.match import match_settings
from guti.referee.config.option_specs import MATCH_OPTIONS
from guti.referee.config.tournament import settings_from_argv
from guti.referee.game.openings import Opening
from guti.referee.game.settings import Timeouts
from guti.referee.tournament.match import match_schedule

ROOT = pathlib.Path(__file__).resolve().parent.parent
ENGINES = ["-engine", "cmd=a", "name=A", "-engine", "cmd=b", "name=B", "-each", "tc=1+0"]


def test_match_schedule_alternates_colours_and_pairs_openings():
    openings = [Opening(None, (m,), m) for m in ("13-12", "14-12")]
    jobs = list(match_schedule(5, openings))
    assert [j.white for j in jobs] == [0, 1, 0, 1, 0]
    assert [j.black for j in jobs] == [1, 0, 1, 0, 1]
    assert [j.opening for j in jobs] == [openings[i] for i in (0, 0, 1, 1, 0)]
    assert [j.round for j in jobs] == [1, 2, 3, 4, 5]  # a match's Round tag is the game number
    assert [j.pair_id for j in jobs] == [0, 0, 1, 1, 2]


def test_match_and_tournament_read_the_same_game_settings():
    flags = [*ENGINES, "-game", "pretwa", "-move-timeout", "7", "-site", "here"]
    match = match_settings(GivenOptions.from_flags(parse_cli(flags, MATCH_OPTIONS))).game
    tournament = settings_from_argv(flags, print).game
    assert match.name == tournament.name == "pretwa"
    assert match.timeouts == tournament.timeouts == Timeouts(move=7.0)
    assert (match.site, tournament.site) == ("here", "here")
    assert (match.event, tournament.event) == ("?", "guti tournament")


def test_fixed_start_is_handed_out_as_one_opening():
    fen = "bbbbb/bbb/bbb/1/www/www/wwwww b 0 1"
    flags = parse_cli([*ENGINES, "-fen", *fen.split()], MATCH_OPTIONS)
    game = match_settings(GivenOptions.from_flags(flags)).game
    assert game.start_fen == fen and game.openings is None
    assert game.schedule_openings() == [Opening(fen, (), "fen")]


def _imports(path: pathlib.Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


def test_nothing_below_the_command_line_imports_it():
    for path in (ROOT / "guti" / "referee").rglob("*.py"):
        if path.parent.name == "cli":
            continue
        bad = {m for m in _imports(path) if m.startswith("guti.referee.cli")}
        assert not bad, f"{path.relative_to(ROOT)} imports {bad}"


def test_tournament_and_game_do_not_import_config():
    for folder in ("tournament", "game"):
        for path in (ROOT / "guti" / "referee" / folder).glob("*.py"):
            bad = {m for m in _imports(path) if m.startswith("guti.referee.config")}
            assert not bad, f"{path.relative_to(ROOT)} imports {bad}"


def test_commands_are_parsed_in_cli_and_the_tools_parse_none():
    """The tools (check, console) take their engine command and options from cli/; none
    of them parses a command line or carries an entry point of its own."""
    for path in (ROOT / "guti" / "referee" / "tools").glob("*.py"):
        assert "argparse" not in _imports(path), f"{path.relative_to(ROOT)} imports argparse"
        defined = {node.name for node in ast.parse(path.read_text()).body
                   if isinstance(node, ast.FunctionDef)}
        assert "main" not in defined, f"{path.relative_to(ROOT)} defines main"


def test_no_config_tools_or_cli_module_is_over_500_lines():
    for folder in ("config", "tools", "cli"):
        for path in (ROOT / "guti" / "referee" / folder).glob("*.py"):
            lines = len(path.read_text().splitlines())
            assert lines <= 500, f"{path.relative_to(ROOT)}: {lines} lines"
