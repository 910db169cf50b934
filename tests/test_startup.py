"""Start-up: ``guti match --help`` and the other subcommands' help print plain data, so
they must not load the settings model or the rules core's tables; a mistake in a run's
options, ``standings`` and ``export`` must not load the run's machinery.

How fast they start is measured by ``benchmarks/referee_cpu.py`` (``cli_startup``) and
``benchmarks/command_start.py``; this file checks what makes it fast: which modules each
path imports, and that the plain-data copies the help reads agree with the modules they
stand in for.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import ROOT

#: Modules whose import is most of the start-up time the help path saves.
HEAVY = ("dataclasses", "inspect", "difflib", "guti.rules.games", "guti.rules.board",
         "guti.referee.game.settings", "guti.referee.tournament.settings", "guti.referee.config.options",
         "guti.referee.config.tournament", "asyncio", "sqlite3")

PROBE = """
import sys
from guti.cli import main
code = main(sys.argv[1:])
print("MODULES", " ".join(sorted(sys.modules)))
sys.exit(code)
"""


def _modules_after(*argv: str) -> tuple[int, set[str], str]:
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("MODULES "), done.stdout
    return done.returncode, set(last.split()[1:]), done.stdout + done.stderr


@pytest.mark.parametrize("command", ["match", "tournament", "standings", "export", "report",
                                     "serve", "board"])
def test_help_imports_no_settings_model_nor_rules_tables(command: str) -> None:
    code, modules, output = _modules_after(command, "--help")
    assert code == 0 and f"usage: guti {command}" in output, output
    assert not modules & set(HEAVY), sorted(modules & set(HEAVY))


def test_a_mistyped_flag_still_gets_its_suggestion_on_the_light_path() -> None:
    code, modules, output = _modules_after("match", "-gmaes", "3")
    assert code == 2 and "did you mean -games?" in output, output
    assert "difflib" in modules and "guti.rules.board" not in modules


#: What a run loads and a mistake in its options, or a command that reads a database, needs
#: not: the event loop, the engines' process layer and the terminal's progress display.
RUN_ONLY = ("asyncio", "guti.referee.process.engine_process", "guti.referee.ugi.client",
            "rich.progress")


@pytest.mark.parametrize("command", ["match", "tournament"])
def test_a_mistake_in_the_options_is_told_before_the_run_is_loaded(command: str) -> None:
    engine = ["-engine", "cmd=python3", "name=A", "-engine", "cmd=python3", "name=B"]
    code, modules, output = _modules_after(command, *engine, "-each", "tc=-1")
    assert code == 2 and "tc=-1" in output, output
    assert "guti.referee.game.settings" in modules  # the options were read in full
    assert not modules & set(RUN_ONLY), sorted(modules & set(RUN_ONLY))


@pytest.mark.parametrize("argv", [["standings", "no.db"], ["export", "no.db", "-json", "x"]])
def test_reading_a_database_loads_no_run(argv: list[str]) -> None:
    code, modules, output = _modules_after(*argv)
    assert code == 2 and "no.db" in output, output
    assert "guti.referee.storage.store" in modules
    assert not modules & set(RUN_ONLY), sorted(modules & set(RUN_ONLY))


def test_pdnout_keys_are_the_pdn_writers_fields() -> None:
    from guti.referee.config.option_specs import PDNOUT_KEYS
    from guti.referee.game.pdn import PDN_FIELD_NAMES

    assert PDNOUT_KEYS == {"file", *PDN_FIELD_NAMES}


def test_the_help_shows_the_defaults_the_settings_use() -> None:
    """The defaults the help prints are those a parsed empty command line gets."""
    from guti.referee.config.args import parse_cli, usage
    from guti.referee.config.given import GivenOptions
    from guti.referee.config.option_specs import MATCH_OPTIONS
    from guti.referee.config.options import games_count, timeouts
    from guti.referee.game.settings import GameSettings

    text = usage("guti match", MATCH_OPTIONS)
    empty = GivenOptions.from_flags(parse_cli([], MATCH_OPTIONS))
    limits = timeouts(empty)
    assert f"number of games (default {games_count(empty)})" in text
    assert f"seconds (default {limits.handshake:g})" in text
    assert f"without a clock (default {limits.move:g})" in text
    assert f"'stalled' (default {limits.stall_grace:g})" in text
    assert f"(default {GameSettings().name})" in text
