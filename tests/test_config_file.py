"""A TOML tournament file and the flags fill one options model: the same settings either
way, the flags winning option by option, mistakes named where they were made, and
reading a file running nothing (building engines is a step of its own)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from guti.referee.config.args import CliError
from guti.referee.config.engine_build import build_engines
from guti.referee.config.tournament import read_tournament_options, tournament_settings
from tests.conftest import GUTI, ROOT

PY = sys.executable
ENGINES_TOML = """
[[engine]]
name = "A"
cmd = "true"
[[engine]]
name = "B"
cmd = "true"
"""
ENGINE_FLAGS = ["-engine", "name=A", "cmd=true", "-engine", "name=B", "cmd=true"]


def settings_of(argv: list[str]):
    given = read_tournament_options(argv)
    engines, setups = build_engines(given.engines, lambda _line: None)
    return tournament_settings(given.with_engines(engines), setups)


def test_a_file_and_the_same_flags_give_the_same_settings(tmp_path: Path) -> None:
    (tmp_path / "t.toml").write_text(
        'game = "pretwa"\ngames = 4\nrounds = 2\nsrand = 7\nconcurrency = 2\nnoswap = true\n'
        '"move-timeout" = 7.5\ndraw = { movenumber = 20, movecount = 4, score = 10 }\n'
        f'[each]\ntc = "1+0.1"\n[openings]\nfile = "random:2"\n{ENGINES_TOML}')
    db = str(tmp_path / "t.db")
    from_file = settings_of([str(tmp_path / "t.toml"), "-db", db])
    from_flags = settings_of([*ENGINE_FLAGS, "-each", "tc=1+0.1", "-game", "pretwa",
                              "-games", "4", "-rounds", "2", "-srand", "7", "-concurrency", "2",
                              "-noswap", "-move-timeout", "7.5", "-draw", "movenumber=20",
                              "movecount=4", "score=10", "-openings", "file=random:2",
                              "-db", db])
    assert from_file.fingerprint() == from_flags.fingerprint()
    assert from_file.describe() == from_flags.describe()
    assert from_file.game == from_flags.game and from_file.scheduling == from_flags.scheduling
    assert (from_file.games, from_file.rounds, from_file.concurrency) == (4, 2, 2)


def test_flags_override_the_file_option_by_option(tmp_path: Path) -> None:
    (tmp_path / "t.toml").write_text(
        f'variant = "pretwa"\ngames = 4\nsite = "file"\n[each]\ntc = "1"\n{ENGINES_TOML}')
    settings = settings_of([str(tmp_path / "t.toml"), "-game", "dash-guti", "-games", "2",
                            "-engine", "name=C", "cmd=true", "-engine", "name=D", "cmd=true",
                            "-engine", "name=E", "cmd=true", "-db", str(tmp_path / "t.db")])
    assert settings.game.name == "dash-guti"  # -game replaces the file's variant too
    assert settings.games == 2 and settings.game.site == "file"
    assert [c.name for c in settings.engines] == ["C", "D", "E"]  # the flags' list, whole


@pytest.mark.parametrize("setting, message", [
    ('games = "x"', "t.toml: games: expected a whole number, got the string 'x'"),
    ("games = 0", "t.toml: games: 0 is less than 1"),
    ("games = 2.5", "t.toml: games: expected a whole number, got the number 2.5"),
    ('game = "chess"', "t.toml: game: unknown game 'chess'"),
    ('pdnout = { file = "a.pdn", nodes = "maybe" }',
     "t.toml: pdnout.nodes: expected true or false, got the string 'maybe'"),
    ("[openings]\nfoo = 1", "t.toml: openings: unknown key 'foo'"),
    # every value is named the same way, and every line starts with the file
    ('resume = "yes"', "t.toml: resume: expected true or false, got the string 'yes'"),
    ("quiet = 1", "t.toml: quiet: expected true or false, got the number 1"),
    ("gamez = 1", "guti tournament: t.toml: unknown setting 'gamez' (did you mean game"),
])
def test_a_wrong_value_in_a_file_names_the_file_and_key(tmp_path: Path, setting: str,
                                                        message: str) -> None:
    (tmp_path / "t.toml").write_text(f"{setting}\n{ENGINES_TOML}\n[each]\ntc = \"1\"\n")
    done = subprocess.run([*GUTI, "tournament", "t.toml"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and message in done.stderr, done.stderr
    assert not (tmp_path / "guti.db").exists()


def test_the_same_mistake_as_a_flag_names_the_flag(tmp_path: Path) -> None:
    with pytest.raises(CliError, match=r"^-games: 'x' is not a whole number$"):
        settings_of([*ENGINE_FLAGS, "-each", "tc=1", "-games", "x"])


def test_reading_a_file_runs_no_build_and_the_build_step_does(tmp_path: Path) -> None:
    build = f'["{PY}", "-c", "open(\'built\', \'w\').close()"]'
    (tmp_path / "t.toml").write_text(
        f'[[engine]]\nname = "A"\ncmd = "true"\nbuild = {build}\n'
        '[[engine]]\nname = "B"\ncmd = "true"\nrequires = ["no-such-tool-for-guti"]\n')
    given = read_tournament_options([str(tmp_path / "t.toml")])
    assert [e.name for e in given.engines] == ["A", "B"]
    assert not (tmp_path / "built").exists()
    said: list[str] = []
    kept, setups = build_engines(given.engines, said.append)
    assert (tmp_path / "built").exists()
    assert [e.name for e in kept] == ["A"] and setups == ()
    assert said == ["skipping engine B: no-such-tool-for-guti is not installed "
                    "(not found on PATH)"]


def test_a_failed_build_that_writes_bytes_not_utf8_is_one_line(tmp_path: Path) -> None:
    build = (f'["{PY}", "-c", "import sys; sys.stderr.buffer.write(b\'cc: \\\\xff bad\\\\n\'); '
             'sys.exit(1)"]')
    (tmp_path / "t.toml").write_text(f'[[engine]]\nname = "A"\ncmd = "true"\nbuild = {build}\n')
    given = read_tournament_options([str(tmp_path / "t.toml")])
    said: list[str] = []
    kept, _ = build_engines(given.engines, said.append)
    assert kept == () and len(said) == 1
    assert said[0].startswith("skipping engine A: build ") and said[0].endswith(
        "failed: cc: \ufffd bad"), said


def test_on_a_cluster_builds_are_handed_to_the_workers(tmp_path: Path) -> None:
    (tmp_path / "t.toml").write_text(
        'cluster = "local:1"\n[[engine]]\nname = "A"\ncmd = "true"\nbuild = "make -s"\n'
        'requires = ["sh"]\n')
    given = read_tournament_options([str(tmp_path / "t.toml")])
    kept, setups = build_engines(given.engines, print, on_cluster=given.has("cluster"))
    assert [e.name for e in kept] == ["A"]
    assert setups == (("A", ("make", "-s"), str(tmp_path), ("sh",), ""),)



@pytest.mark.signals
@pytest.mark.parametrize("command", ["tournament", "match", "tune"])
@pytest.mark.parametrize("signo", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_while_the_openings_are_read_interrupts_the_run(tmp_path: Path, command: str,
                                                                 signo: int) -> None:
    """Before the run's own handling of signals begins (here: its openings read from a
    FIFO no one writes yet), SIGTERM and SIGHUP interrupt a run as Ctrl-C does: one line
    naming the command, exit 130 (they exited 143 and 129 without a word)."""
    from tests.conftest import killed_at_end, wait_for

    os.mkfifo(tmp_path / "book")
    engine = ["-engine", f"cmd={PY}", "args=-m guti.engine", f"dir={ROOT}"]
    more = (["-param", "EvalMobility=4,0,40,2,0.05", "-db", "t.db"] if command == "tune"
            else [*engine, "name=B"])
    with killed_at_end(subprocess.Popen(
            [*GUTI, command, *engine, "name=A", *more, "-each", "depth=1", "-openings",
             "file=book"], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
            # as from a terminal: a test run started in the background ignores SIGINT, and
            # its children would inherit that (Python then keeps it ignored)
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))) as run:
        # the kernel's name for a FIFO's open waiting for its writer
        wait_for(lambda: Path(f"/proc/{run.pid}/wchan").read_text() == "wait_for_partner",
                 "the openings' FIFO opened", 60)
        run.send_signal(signo)
        _, err = run.communicate(timeout=60)
    assert run.returncode == 130, err
    assert err == f"guti {command}: interrupted\n"


@pytest.mark.parametrize("skipped, refused", [("hero", True), ("c", False)])
def test_a_gauntlet_whose_first_engine_is_skipped_is_refused(tmp_path: Path, skipped: str,
                                                             refused: bool) -> None:
    """A gauntlet is about its first engine: when it cannot run (a program it requires is
    missing), the run is refused in one line, not played as a gauntlet of the next one;
    another engine skipped leaves a gauntlet of the first."""
    engine = f'cmd = "{PY}"\nargs = ["-m", "guti.engine"]\ndir = "{ROOT}"\n'
    text = 'tournament = "gauntlet"\n'
    for name in ("hero", "b", "c"):
        needs = 'requires = ["no-such-tool-xyz"]\n' if name == skipped else ""
        text += f'[[engine]]\nname = "{name}"\n{engine}{needs}'
    (tmp_path / "g.toml").write_text(text + "[each]\ndepth = 1\n")
    done = subprocess.run([*GUTI, "tournament", "g.toml", "-db", "g.db", "-quiet"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.stdout.startswith(f"skipping engine {skipped}: no-such-tool-xyz is not "
                                  "installed"), done.stdout
    if refused:
        assert done.returncode == 2
        assert done.stderr == ("guti tournament: engine hero was skipped, and a gauntlet is "
                               "about its first engine; the run is not started\n")
        assert not (tmp_path / "g.db").exists()
    else:
        assert done.returncode == 0, done.stderr
        assert "gauntlet of 2 engines (hero, b)" in done.stdout



def test_a_skipped_engine_without_a_name_is_named_as_it_would_have_been(tmp_path: Path) -> None:
    """Without ``name=``, an engine is named by its program's file name; the line that
    skips it says that name, not ``{python}`` or a whole path."""
    (tmp_path / "t.toml").write_text(
        '[[engine]]\ncmd = "{python}"\nrequires = ["no-such-tool-xyz"]\n'
        '[[engine]]\ncmd = "/bin/true"\nrequires = ["no-such-tool-xyz"]\n' + ENGINES_TOML)
    said: list[str] = []
    build_engines(read_tournament_options([str(tmp_path / "t.toml")]).engines, said.append)
    assert said == [f"skipping engine {os.path.basename(PY)}: no-such-tool-xyz is not "
                    "installed (not found on PATH)",
                    "skipping engine true: no-such-tool-xyz is not installed (not found on "
                    "PATH)"]


def test_a_gauntlet_left_without_opponents_for_its_seeds_is_refused(tmp_path: Path) -> None:
    """Three seeds against d: d skipped would leave a round-robin of the seeds."""
    engine = f'cmd = "{PY}"\nargs = ["-m", "guti.engine"]\ndir = "{ROOT}"\n'
    text = 'tournament = "gauntlet"\nseeds = 3\n'
    for name in ("a", "b", "c", "d"):
        needs = 'requires = ["no-such-tool-xyz"]\n' if name == "d" else ""
        text += f'[[engine]]\nname = "{name}"\n{engine}{needs}'
    (tmp_path / "g.toml").write_text(text + "[each]\ndepth = 1\n")
    done = subprocess.run([*GUTI, "tournament", "g.toml", "-db", "g.db"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2
    assert done.stderr == ("guti tournament: too many engines were skipped for a gauntlet of "
                           "its first 3 engines against the others; the run is not started\n")
