"""A stranger's first hour: what guti says and sends where a newcomer's
engine (one written from protocol.md alone) was left guessing. Each test goes through the
real ``guti`` command where the item is about the command line."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from guti.referee.game.limits import Limits
from guti.referee.game.timecontrol import Clock, go_for_turn
from tests.conftest import GUTI, ROOT, parse_pdn, rows

QUIRKY = ROOT / "tests" / "engines" / "quirky.py"
PY = sys.executable
GREEDY_CHECK = "option name Greedy type check default true"


def guti(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([*GUTI, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "PYTHONPATH": str(ROOT)})


def quirky(name: str, *flags: str, **tokens: str) -> list[str]:
    args = shlex.join([str(QUIRKY), *flags])
    return ["-engine", f"cmd={PY}", f"args={args}", f"name={name}",
            *(f"{k.replace('_', '.')}={v}" for k, v in tokens.items())]


def reference(name: str, *tokens: str) -> list[str]:
    return ["-engine", f"cmd={PY}", "args=-m guti.engine", f"dir={ROOT}", f"name={name}", *tokens]


# -- 2: the time taken is measured and printed, not promised -----------------------------


def assert_elapsed_last(stdout: str, thought_ms: list[float]) -> None:
    """The last line is ``Elapsed: S s``, and S covers the moves the run recorded: its
    games' moves (``thought_ms``, each as the run stored it) were played one after the
    other within the run (one game at a time), so S is at least their sum, whatever the
    machine's load. Slack for rounding only: S is printed to 0.1 s, a PDN's times to 1 ms."""
    last = stdout.strip().splitlines()[-1]
    found = re.fullmatch(r"Elapsed: (\d+\.\d) s", last)
    assert found, last
    at_least = (sum(thought_ms) - 0.5 * len(thought_ms)) / 1000 - 0.05
    assert thought_ms and float(found.group(1)) >= at_least, (last, sum(thought_ms))


def stored_move_times(db: Path) -> list[float]:
    """Every move's time (ms) of every game in the database ``db`` (book moves have none)."""
    return [ms for (text,) in rows(db, "SELECT elapsed_ms FROM games")
            for ms in json.loads(text) if ms is not None]


def pdn_move_times(pdn: Path) -> list[float]:
    """Every engine move's time (ms) written in the PDN file ``pdn`` (its ``[%emt S]``)."""
    return [float(emt) * 1000 for emt in re.findall(r"\[%emt (\d+\.\d+)\]", pdn.read_text())]


def test_readme_promises_no_duration() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "about\n12 s" not in readme and "about 12 s" not in readme
    assert "guti does not promise a time" in readme and "`Elapsed: ...`" in readme


# -- 5: engine options are checked against the engine's own declaration ------------------


def test_bad_engine_options_stop_a_match_before_any_game(tmp_path: Path) -> None:
    cases = {
        "option.Levl=3": ["Levl", "no option"],
        "option.Level=abc": ["option.Level=abc: a spin option takes a whole number"],
        "option.Level=99": ["Level", "99", "range"],
        "option.Seed=-5": ["option.Seed=-5: out of its range"],
    }
    for token, words in cases.items():
        done = guti("match", *reference("ref", token), *reference("other"),
                    "-each", "depth=1", "-games", "2", "-pdnout", "g.pdn", cwd=tmp_path)
        assert done.returncode == 2, (token, done.stdout, done.stderr)
        line = done.stderr.strip()
        assert "\n" not in line and "engine ref" in line, line
        assert all(w in line for w in words), (token, line)
        assert "Game 1" not in done.stdout
        assert "[Event" not in (tmp_path / "g.pdn").read_text() if (tmp_path / "g.pdn").exists() else True


def test_bad_combo_and_check_values_stop_a_tournament(tmp_path: Path) -> None:
    combo = "option name Style type combo default calm var calm var wild"
    for token, words in (("option.Style=mad", ["Style", "mad", "calm, wild"]),
                         ("option.Greedy=maybe", ["Greedy", "maybe", "true or false"])):
        done = guti("tournament", *quirky("q", "--option-line", combo, "--option-line",
                                          GREEDY_CHECK), token,
                    *reference("ref"), "-each", "depth=1", "-games", "2",
                    "-db", f"{token}.db", cwd=tmp_path)
        assert done.returncode == 2, (token, done.stdout, done.stderr)
        assert all(w in done.stderr for w in ["engine q", *words]), done.stderr
        assert "Finished game" not in done.stdout


def test_an_error_reply_to_the_set_up_is_shown_and_stops_the_match(tmp_path: Path) -> None:
    """The option is declared and the value fits, but the engine still answers ``info
    string error``: that line reaches the terminal and no game is played."""
    book = "option name Book type string default x"
    done = guti("match", *quirky("q", "--option-line", book, "--quirk", "reject-options"),
                "option.Book=none", *reference("ref"), "-each", "depth=1", "-games", "1",
                cwd=tmp_path)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "engine q rejected its set-up: info string error setoption name Book value none" \
        in done.stderr
    assert "Game 1" not in done.stdout
    # ... also when the engine says a hundred more lines before its readyok
    chatty = guti("match", *quirky("q", "--option-line", book, "--quirk", "reject-options",
                                   "--quirk", "chatty-isready"),
                  "option.Book=none", *reference("ref"), "-each", "depth=1", "-games", "1",
                  cwd=tmp_path)
    assert chatty.returncode == 2, (chatty.stdout, chatty.stderr)
    assert "engine q rejected its set-up: info string error setoption name Book value none" \
        in chatty.stderr
    # ... and when its words are apart by tabs, a blank before them (protocol.md 5.1)
    tabbed = guti("match", *quirky("q", "--option-line", book, "--quirk", "reject-options",
                                   "--quirk", "tabbed-errors"),
                  "option.Book=none", *reference("ref"), "-each", "depth=1", "-games", "1",
                  cwd=tmp_path)
    assert tabbed.returncode == 2, (tabbed.stdout, tabbed.stderr)
    assert r"engine q rejected its set-up:  info\tstring\terror setoption name Book" \
        in tabbed.stderr
    accepted = guti("match", *quirky("q", "--option-line", book), "option.Book=none",
                    *reference("ref"), "-each", "depth=1", "-games", "1", cwd=tmp_path)
    assert accepted.returncode == 0, accepted.stderr


# -- 6: check options take true|false ----------------------------------------------------


def test_toml_booleans_are_sent_as_true_false(tmp_path: Path) -> None:
    log = tmp_path / "set.log"
    args = [str(QUIRKY), "--option-line", GREEDY_CHECK, "--setlog", str(log)]
    cfg = tmp_path / "t.toml"
    cfg.write_text(
        f'games = 1\ndb = "t.db"\n[each]\ndepth = 1\n'
        f'[[engine]]\nname = "q"\ncmd = "{PY}"\nargs = {args!r}\noptions = {{ Greedy = false }}\n'
        f'[[engine]]\nname = "ref"\ncmd = "{PY}"\nargs = ["-m", "guti.engine"]\ndir = "{ROOT}"\n'
        .replace("'", '"'))
    done = guti("tournament", str(cfg), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert_elapsed_last(done.stdout, stored_move_times(tmp_path / "t.db"))
    sent = [line for line in log.read_text().splitlines() if "Greedy" in line]
    assert sent and all(line == "setoption name Greedy value false" for line in sent), sent


def test_an_option_of_each_and_of_the_engine_in_other_cases_is_sent_once(tmp_path: Path) -> None:
    """``-each option.Level=1`` and the engine's own ``option.level=5``: one option (names
    are the same in any case), the engine's value, sent once and stored once."""
    log = tmp_path / "set.log"
    done = guti("tournament", *quirky("q", "--setlog", str(log)), "option.level=5",
                *reference("ref"), "-each", "depth=1", "option.Level=1", "-games", "2",
                "-concurrency", "1", "-db", "t.db", "-quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    sent = [line for line in log.read_text().splitlines() if "Level" in line or "level" in line]
    assert sent and set(sent) == {"setoption name Level value 5"}, sent
    assert len(sent) == 1, sent  # one game at a time: one process, one handshake
    [(stored,)] = rows(tmp_path / "t.db", "SELECT config FROM engines WHERE name = 'q'")
    assert json.loads(stored)["options"] == {"level": "5"}


def test_a_button_option_is_pressed_with_no_value(tmp_path: Path) -> None:
    """protocol.md: a button is pressed with ``setoption name NAME``; ``option.NAME=`` asks
    for that, and a value for a button is refused before any game."""
    log = tmp_path / "set.log"
    button = ["--option-line", "option name Clear Memory type button", "--setlog", str(log)]
    done = guti("match", *quirky("q", *button), "option.Clear Memory=", *reference("ref"),
                "-each", "depth=1", "-games", "1", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    sent = [line for line in log.read_text().splitlines() if "Clear" in line]
    assert sent == ["setoption name Clear Memory"], sent
    done = guti("match", *quirky("q", *button), "option.Clear Memory=true", *reference("ref"),
                "-each", "depth=1", "-games", "1", cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "option.Clear Memory=true: a button takes no value (option.Clear Memory= presses " \
        "it)" in done.stderr, done.stderr


# -- 15: movestogo with a period ---------------------------------------------------------


def test_go_carries_movestogo_whenever_a_period_is_in_force() -> None:
    period = Limits(base_ms=2000, moves_per_period=10)
    white, black = Clock(period), Clock(period)
    white.remaining_ms, white.moves_in_period = 1998.0, 9
    go = go_for_turn(white, white, black)
    assert go.movestogo == 1 and "movestogo 1" in go.arguments()
    assert go_for_turn(black, white, black).movestogo == 10
    plain = Clock(Limits(base_ms=2000, inc_ms=10))
    assert "movestogo" not in go_for_turn(plain, plain, plain).arguments()


def test_a_match_with_tc_moves_per_period_sends_movestogo(tmp_path: Path) -> None:
    log = tmp_path / "go.log"
    done = guti("match", *quirky("q", "--setlog", str(log)), *reference("ref", "option.Level=1"),
                "-each", "tc=3/2", "depth=1", "-games", "1", "-pdnout", "g.pdn",
                cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert_elapsed_last(done.stdout, pdn_move_times(tmp_path / "g.pdn"))
    goes = [line.split() for line in log.read_text().splitlines() if line.startswith("go")]
    counts = [int(w[w.index("movestogo") + 1]) for w in goes]
    assert counts[:4] == [3, 2, 1, 3], goes[:4]


# -- 10: every output path gets its parent folders -----------------------------------------


def test_every_output_path_creates_its_parent_folders(tmp_path: Path) -> None:
    each = ["-each", "depth=1", "-games", "2"]
    match = guti("match", *reference("a"), *reference("b", "stderr=m/3/b.txt"), *each,
                 "-pdnout", "m/1/g.pdn", "-log", "m/2/t.log", cwd=tmp_path)
    assert match.returncode == 0, match.stderr
    assert (tmp_path / "m/1/g.pdn").read_text().count("[Event") == 2
    assert (tmp_path / "m/2/t.log").stat().st_size > 0
    assert (tmp_path / "m/3/b.txt").is_file()
    tour = guti("tournament", *reference("a"), *reference("b", "stderr=t/3/e.txt"), *each,
                "-db", "t/1/t.db", "-pdnout", "t/2/t.pdn", cwd=tmp_path)
    assert tour.returncode == 0, tour.stderr
    assert (tmp_path / "t/3/e.txt").is_file()
    out = guti("export", "t/1/t.db", "-json", "e/1/g.json", "-pdn", "e/2/g.pdn", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert len(json.loads((tmp_path / "e/1/g.json").read_text())) == 2
    assert (tmp_path / "e/2/g.pdn").read_text().count("[Event") == 2
    (tmp_path / "file").write_text("x")
    blocked = guti("export", "t/1/t.db", "-json", "file/g.json", cwd=tmp_path)
    assert blocked.returncode == 2 and blocked.stderr.count("\n") == 1, blocked.stderr
    assert "file" in blocked.stderr and "Traceback" not in blocked.stderr
    nowhere = guti("export", "t/1/t.db", "-json", "/proc/g.json", cwd=tmp_path)
    assert nowhere.returncode == 2 and nowhere.stderr.count("\n") == 1, nowhere.stderr
    assert "/proc/g.json:" in nowhere.stderr and ".tmp" not in nowhere.stderr


def test_a_refused_tournament_leaves_no_folder_behind(tmp_path: Path) -> None:
    """The folders a run made for its outputs go again when the run is refused: an
    engine that cannot start, an output that cannot be written."""
    cannot_start = ["-engine", "cmd=/bin/false", "name=dead", *reference("b")]
    for outputs in (["-db", "t/1/t.db", "-pdnout", "t/2/t.pdn"],
                    ["-db", "t/1/t.db", "-pdnout", "/proc/no/t.pdn"]):
        run = guti("tournament", *cannot_start, "-each", "depth=1", "-games", "2", *outputs,
                   cwd=tmp_path)
        assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
        assert not (tmp_path / "t").exists(), outputs


# -- 16: every subcommand's -help, and a suggestion for a mistyped flag --------------------


def test_every_subcommand_help_lists_its_options_and_exits_0(tmp_path: Path) -> None:
    """Both spellings, ``-help`` (as the docs give it) and ``--help``."""
    from guti.cli import COMMANDS
    from guti.referee.cli.tournament import EXPORT_OPTIONS, STANDINGS_OPTIONS
    from guti.referee.config.option_specs import ENGINE_KEY_HELP, MATCH_OPTIONS, TOURNAMENT_OPTIONS

    specs = {"match": MATCH_OPTIONS, "tournament": TOURNAMENT_OPTIONS,
             "standings": STANDINGS_OPTIONS, "export": EXPORT_OPTIONS}
    for command in COMMANDS:
        one_dash = guti(command, "-help", cwd=tmp_path, timeout=60)
        done = guti(command, "--help", cwd=tmp_path, timeout=60)
        assert one_dash.returncode == 0, (command, one_dash.stdout, one_dash.stderr)
        assert one_dash.stdout == done.stdout, command
        assert done.returncode == 0, (command, done.stdout, done.stderr)
        assert done.stdout.startswith("usage: guti " + command), (command, done.stdout)
        assert "``" not in done.stdout, command
        lines = done.stdout.splitlines()
        for spec in specs.get(command, []):
            assert sum(line.lstrip().startswith(f"-{spec.name} ") or line.strip() == f"-{spec.name}"
                       for line in lines) == 1, (command, spec.name)
    match_help = guti("match", "--help", cwd=tmp_path).stdout
    for key in ("cmd=", "args=", "name=", "dir=", "tc=", "st=", "depth=", "nodes=",
                "timemargin=", "option.X=", "restart="):
        assert any(line.strip().startswith(key) for line in match_help.splitlines()), key
    assert len(ENGINE_KEY_HELP) >= 11


def test_a_mistyped_flag_suggests_the_nearest_one(tmp_path: Path) -> None:
    for command, word, near in (("match", "-gmaes", "-games"), ("tournament", "--concurency",
                                "-concurrency"), ("standings", "-drawmdel", "-drawmodel")):
        args = ["x.db", word, "1"] if command == "standings" else [word, "1"]
        done = guti(command, *args, cwd=tmp_path)
        assert done.returncode == 2, done.stderr
        assert f"did you mean {near}?" in done.stderr and done.stderr.count("\n") == 1, done.stderr
    for command in ("check", "console"):
        done = guti(command, "--gmae", "pretwa", "--", "no-such-engine", cwd=tmp_path)
        assert done.returncode == 2 and "did you mean --game?" in done.stderr, done.stderr


def test_the_argparse_commands_take_their_options_with_one_dash_too(tmp_path: Path) -> None:
    two, one = (guti("perft", "pretwa", "2", *flags, cwd=tmp_path)
                for flags in (("--divide",), ("-divide",)))
    assert two.returncode == one.returncode == 0 and one.stdout == two.stdout, one.stderr
    assert one.stdout.count(":") > 1  # divided: a line per first move
    for command in ("check", "console"):  # -game takes its value, and checks it
        done = guti(command, "-game", "chess", "--", "no-such-engine", cwd=tmp_path)
        assert done.returncode == 2 and "chess" in done.stderr, done.stderr
        assert done.stderr.count("\n") == 1, done.stderr


# -- 7: one game numbering, 1-based wherever a person reads it ----------------------------


def test_game_numbers_agree_on_terminal_pdn_json_and_export_order(tmp_path: Path) -> None:
    tour = guti("tournament", *reference("a"), *reference("b"), *reference("c"),
                "-each", "depth=1", "-games", "2", "-concurrency", "2", "-db", "t.db",
                "-pdnout", "live.pdn", cwd=tmp_path)
    assert tour.returncode == 0, tour.stderr
    finished = [int(n) for n in re.findall(r"Finished game (\d+) ", tour.stdout)]
    assert sorted(finished) == [1, 2, 3, 4, 5, 6], tour.stdout
    out = guti("export", "t.db", "-json", "g.json", "-pdn", "g.pdn", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    games = json.loads((tmp_path / "g.json").read_text())
    assert [g["game_id"] for g in games] == [1, 2, 3, 4, 5, 6]
    exported = parse_pdn((tmp_path / "g.pdn").read_text())
    assert [g.tags["Game"] for g in exported] == ["1", "2", "3", "4", "5", "6"]
    live = parse_pdn((tmp_path / "live.pdn").read_text())
    assert sorted(int(g.tags["Game"]) for g in live) == [1, 2, 3, 4, 5, 6]
    # the same game under the same number everywhere: players and moves agree
    by_number = {int(g.tags["Game"]): g for g in live}
    for game in games:
        tags = by_number[game["game_id"]].tags
        assert (tags["White"], tags["Black"]) == (game["white"], game["black"])


# -- 8: a crashed engine's last stderr lines ------------------------------------------------


def test_a_panic_shows_its_message_and_the_stderr_tail_is_kept(tmp_path: Path) -> None:
    tour = guti("tournament", *quirky("rusty", "--quirk", "panic", "--at", "2"),
                *reference("ref"), "-each", "depth=1", "-games", "1", "-db", "t.db",
                "-pdnout", "t.pdn", cwd=tmp_path)
    assert tour.returncode == 0, tour.stderr
    shown = " ".join(tour.stdout.split())  # a long line may be wrapped at 160 columns
    assert ("stderr: thread 'main' panicked at src/search.rs:42:9: index out of bounds: the len "
            "is 23 but the index is 23") in shown, tour.stdout
    assert "RUST_BACKTRACE" not in shown and "iteration 7" not in shown
    out = guti("export", "t.db", "-json", "g.json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    detail = json.loads((tmp_path / "g.json").read_text())[0]["detail"]
    lines = detail.splitlines()
    assert lines[1] == "last 20 stderr lines of the engine:"  # bounded: 27 were written
    assert lines[-1].startswith("note: run with `RUST_BACKTRACE=1`")
    assert lines[2] == "search: iteration 7 done" and len(lines) == 22
    comment = parse_pdn((tmp_path / "t.pdn").read_text())[0]
    text = (tmp_path / "t.pdn").read_text()
    assert "search: iteration 7 done | search: iteration 8 done" in " ".join(text.split())
    assert comment.tags["Termination"] == "disconnect"


# -- 9: an illegal move after a rejected position names the engine's error line ------------


def test_an_illegal_move_after_a_rejected_position_names_the_error(tmp_path: Path) -> None:
    pdn = tmp_path / "g.pdn"
    done = guti("match", *reference("ref", "option.Level=1"), *quirky("q", "--quirk", "reject-moves"),
                "-each", "depth=1", "-games", "1", "-pdnout", str(pdn), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    shown = " ".join(done.stdout.split())
    assert "engine q played illegal" in shown, done.stdout
    assert ("before it, the engine answered: info string error position: moves are not "
            "supported here") in shown
    assert "moves are not supported here" in pdn.read_text()


def test_export_lists_games_in_game_number_order_not_finishing_order(tmp_path: Path) -> None:
    from guti.referee.game.engine_config import EngineConfig
    from guti.referee.game.reasons import Reason
    from guti.referee.game.record import GameRecord
    from guti.referee.storage.export import export_json, export_pdn
    from guti.referee.storage.store import TournamentStore
    from guti.referee.tournament.scheduler import schedule
    from guti.rules import Result

    jobs = list(schedule("roundrobin", 2, 2, 2))
    with TournamentStore(str(tmp_path / "t.db")) as store:
        store.create({}, "fp", [EngineConfig("a", ["a"]), EngineConfig("b", ["b"])], iter(jobs))
        for job in (jobs[2], jobs[0], jobs[3], jobs[1]):  # finishing order
            names = ("a", "b") if job.white == 0 else ("b", "a")
            store.record_game(job, GameRecord(
                game="egara-guti", white=names[0], black=names[1], moves=["13-12"],
                elapsed_ms=[1.0], clock_ms=[None], result=Result.WHITE_WINS,
                reason=Reason.NO_LEGAL_MOVE, final_fen="x"))
        export_json(store, str(tmp_path / "g.json"))
        export_pdn(store, str(tmp_path / "g.pdn"))
    assert [g["game_id"] for g in json.loads((tmp_path / "g.json").read_text())] == [1, 2, 3, 4]
    games = parse_pdn((tmp_path / "g.pdn").read_text())
    assert [g.tags["Game"] for g in games] == ["1", "2", "3", "4"]
