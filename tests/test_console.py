"""``guti console`` driven in a pseudo-terminal, as a person would use it.

Each test spawns ``guti console -- ENGINE`` under pexpect (so the real
prompt_toolkit prompt runs, with its history file and completion) and types at it.
Expected boards, FENs, legal moves and perft counts are computed with the rules
core in the test, never copied from the console's own output.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

from guti.rules import Board, divide
from tests.conftest import (
    ENGINE_ARGV,
    GUTI,
    ROOT,
    argv_of_bot_or_reason,
    killed_at_end,
    wait_for,
)
from tests.engines.buggy_movegen import buggy_game

BUGGY = str(ROOT / "tests" / "engines" / "buggy_movegen.py")
FAULTY = str(ROOT / "tests" / "engines" / "faulty.py")
TIMEOUT = 30  # generous: the machine is shared
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _other_language_bot(request: pytest.FixtureRequest) -> list[str]:
    """The JS bot if node is there, else the C bot (built once per session)."""
    js = argv_of_bot_or_reason(request, "js")
    if isinstance(js, list):
        return js
    c = argv_of_bot_or_reason(request, "c")
    if isinstance(c, str):
        pytest.skip(f"no non-Python bot to drive: {js}; {c}")
    return c


class Session:
    """One console in a pty."""

    def __init__(self, engine: list[str], history: Path, *opts: str) -> None:
        env = dict(os.environ, GUTI_HISTORY=str(history), PROMPT_TOOLKIT_NO_CPR="1",
                   TERM="xterm")
        env.pop("NO_COLOR", None)
        self.child = pexpect.spawn(
            GUTI[0], [*GUTI[1:], "console", *opts, "--", *engine], env=env, encoding="utf-8",
            timeout=TIMEOUT, dimensions=(60, 250), cwd=str(ROOT),
        )
        self.seen = ""

    def expect(self, pattern: str | list) -> re.Match | int:
        idx = self.child.expect(pattern)
        self.seen += ANSI.sub("", self.child.before + (self.child.after or ""))
        return idx if isinstance(pattern, list) else self.child.match

    def prompt(self, game: str = "egara-guti") -> None:
        self.expect(re.escape(game) + r" [wb]>")

    def type(self, line: str) -> None:
        self.child.send(line + "\r")

    def text_since(self, marker: str) -> str:
        return self.seen[self.seen.rfind(marker):]

    def quit(self) -> int:
        self.type("/quit")
        self.child.expect(pexpect.EOF)
        self.seen += ANSI.sub("", self.child.before)
        self.child.close()
        assert "Traceback" not in self.seen, self.seen
        return self.child.exitstatus


@pytest.fixture(params=["reference", "other-language"])
def engine(request) -> list[str]:
    if request.param == "reference":
        return [sys.executable, "-m", "guti.engine"]
    return _other_language_bot(request)


def test_move_board_go_and_perft(engine, tmp_path):
    s = Session(engine, tmp_path / "history")
    s.expect(r"< id name ([^\r\n]*)")
    s.expect(r"< ugiok")
    s.expect(r"engine: [^\r\n]* by ")
    s.prompt()
    # Every line is shown with a timestamp and its direction.
    assert re.search(r"\d\d:\d\d:\d\d\.\d\d\d > ugi", s.seen), s.seen
    board = Board("egara-guti")
    for m in ("13-12", "11x13", "16x12"):
        board.push_str(m)
    s.type("/move 13-12 11x13 16x12")
    s.expect(re.escape(f"fen {board.fen()}"))  # the board redrawn...
    legal = " ".join(str(m) for m in board.legal_moves)
    s.expect(re.escape(f"legal: {legal}"))  # ...with the legal moves
    assert "B10" in s.seen and ".11" in s.seen  # pieces and point numbers
    s.prompt()
    s.type("/go movetime 300")
    m = s.expect(r"bestmove (\S+) is legal \((\d+) ms\)")
    assert m.group(1) in {str(mv) for mv in board.legal_moves}
    s.prompt()
    s.type("/perft 5")
    s.expect(r"no difference: (\d+) moves, (\d+) nodes at depth 5")
    assert int(s.child.match.group(2)) == sum(c for _, c in divide(board, 5))
    s.prompt()
    assert s.quit() == 0


def test_perft_diff_shows_the_bug_and_narrows_it(tmp_path):
    s = Session([sys.executable, BUGGY], tmp_path / "history")
    s.prompt()
    good = Board("egara-guti")
    bad = Board(buggy_game("egara-guti", "20x6"))
    ours, theirs = dict(divide(good, 5)), dict(divide(bad, 5))
    wrong = [m for m in ours if ours[m] != theirs.get(m)]
    assert wrong == ["13-12"]  # the test's own premise, from the rules core
    s.type("/perft 5")
    s.expect(r"step in: /perft 5 13-12")
    report = s.text_since("perft 5:")
    assert f"13-12: engine {theirs['13-12']}, guti {ours['13-12']}" in report, report
    assert "14-12:" not in report and "15-12:" not in report, report  # only the difference
    s.prompt()
    good.push_str("13-12")
    bad.push_str("13-12")
    ours, theirs = dict(divide(good, 4)), dict(divide(bad, 4))
    (deeper,) = [m for m in ours if ours[m] != theirs.get(m)]
    s.type("/perft 5 13-12")
    s.expect(re.escape(f"{deeper}: engine {theirs[deeper]}, guti {ours[deeper]}"))
    assert "perft 4 after 13-12" in s.seen
    s.prompt()
    assert s.quit() == 0


def test_play_to_the_end_of_a_game(tmp_path):
    s = Session([sys.executable, "-m", "guti.engine"], tmp_path / "history")
    s.prompt()
    s.type("/fen 4b/3/3/1/3/3/ww3 w 46 30")  # four plies to the fifty-ply rule
    s.prompt()
    s.type("/play w movetime 100")
    mine = 0
    while True:
        idx = s.expect([r"your move; legal: ([^\r\n]+)\r\n", r"game over: ([^\r\n]+)\r\n"])
        if idx == 1:
            break
        assert mine < 10, "the game does not end"
        move = ANSI.sub("", s.child.match.group(1)).split()[0]
        s.child.expect("your move>")
        s.type(move)
        mine += 1
    assert mine == 2
    end = ANSI.sub("", s.child.match.group(1))
    assert end == "1-0 (fifty plies), White wins: you win", end
    assert "clock 50" in s.seen  # the last board shown: fifty plies without a capture
    assert s.seen.count("is legal") == 2  # both engine moves checked
    s.prompt()
    assert s.quit() == 0


def test_history_is_kept_between_runs_and_completion_works(tmp_path):
    history = tmp_path / "history"
    s = Session([sys.executable, "-m", "guti.engine"], history)
    s.prompt()
    s.type("/fen 4b/3/3/1/3/3/w4 w")
    s.expect(re.escape("fen 4b/3/3/1/3/3/w4 w 0 1"))
    s.prompt()
    assert s.quit() == 0
    assert "/fen 4b/3/3/1/3/3/w4 w" in history.read_text()

    s = Session([sys.executable, "-m", "guti.engine"], history)
    s.prompt()
    s.child.send("\x1b[A")  # up: /quit
    s.child.send("\x1b[A")  # up: the /fen line of the first run
    s.expect(re.escape("fen 4b/3/3/1/3/3/w4 w"))  # drawn over "/quit" from its "/" on
    s.child.send("\r")
    s.expect(re.escape("fen 4b/3/3/1/3/3/w4 w 0 1"))
    s.prompt()
    s.child.send("/mo\t")  # completes the command...
    # The terminal may draw the completed "ve" as a separate update after "/mo".
    s.expect(r"/mo(?:\x1b\[[0-9;?]*[A-Za-z])*ve")
    s.child.send("19-2\t")  # ...and the only legal move from 19 starting so
    s.expect("0")
    s.child.send("\r")
    after = Board("egara-guti", "4b/3/3/1/3/3/w4 w")
    after.push_str("19-20")
    s.expect(re.escape(f"fen {after.fen()}"))
    s.prompt()
    assert s.quit() == 0


def test_engine_exit_is_reported_not_a_traceback(tmp_path):
    s = Session([sys.executable, FAULTY, "--mode", "crash"], tmp_path / "history")
    s.prompt()
    s.type("/go movetime 100")
    s.expect(r"error: [^\r\n]*exited \(exit code 3\)")
    s.prompt()
    s.type("/go")
    s.expect("the engine is not running")
    s.prompt()
    assert s.quit() == 0


def test_unstartable_engine_is_one_clear_line(tmp_path):
    """As ``guti check`` and ``guti match`` say it: one ``guti console:`` line on stderr,
    exit status 2, nothing on stdout."""
    res = subprocess.run([*GUTI, "console", "--", str(tmp_path / "no-such-engine")],
                         capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert res.returncode == 2, res.stdout + res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("guti console: "), res.stderr
    assert "cannot start" in lines[0] and "no-such-engine" in lines[0]
    assert res.stdout == "" and "Traceback" not in res.stderr


def test_script_on_stdin_pretwa_board_check_and_log(tmp_path):
    """Without a terminal the console reads lines as a script: each waits for the last
    bestmove; /check runs the conformance check on a fresh copy; /log copies traffic.
    A game's name is read in any case, as on the command line."""
    log = tmp_path / "traffic.log"
    script = "\n".join([
        f"/log {log}",
        "/new Pretwa",
        "/move 5-1 2x5",
        "/go depth 2",
        "query p1turn",
        "/check",
        "/log",
        "/quit",
    ]) + "\n"
    res = subprocess.run([*GUTI, "console", "--", sys.executable, "-m", "guti.engine"], input=script,
                         capture_output=True, text=True, timeout=120, cwd=str(ROOT))
    out = res.stdout
    assert res.returncode == 0 and "Traceback" not in out + res.stderr, out + res.stderr
    board = Board("pretwa")
    board.push_str("5-1")
    board.push_str("2x5")
    assert f"fen {board.fen()}" in out
    assert "B14" in out and ".2" in out  # Pretwa's points drawn with their pieces
    m = re.search(r"bestmove (\S+) is legal", out)
    assert m and m.group(1) in {str(mv) for mv in board.legal_moves}, out
    assert re.search(r"< response true", out)  # raw line to the engine: White to move
    assert "PASS pretwa: query, three or fewer" in out
    assert "egara-guti:" not in out.split("guti check on a fresh copy")[1]  # only this game
    assert re.search(r"guti check: \d+ passed, 0 failed", out), out
    logged = log.read_text()
    assert re.search(r"^\d\d:\d\d:\d\d\.\d{3} > go depth 2$", logged, re.M), logged
    assert re.search(r"^\d\d:\d\d:\d\d\.\d{3} < bestmove ", logged, re.M)


def _script(engine_mode: str, *lines: str, timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run([*GUTI, "console", "--", sys.executable, FAULTY, "--mode", engine_mode],
                          input="\n".join(lines) + "\n", capture_output=True, text=True,
                          timeout=timeout, cwd=str(ROOT))


def test_a_scripts_quit_does_not_wait_for_a_hung_search(tmp_path):
    """``/quit`` ends a script at once, whatever search is pending (a line that waited for
    the hung engine's bestmove would take a minute, past this run's bound)."""
    res = _script("hang", "/go depth 1", "/quit", timeout=30)
    assert res.returncode == 0 and "Traceback" not in res.stdout + res.stderr, res.stdout


@pytest.mark.parametrize("depth", [2, 40])
def test_perft_ends_at_once_when_the_engine_does_not_count_it(tmp_path, depth):
    """An engine that answers ``go perft`` as a search (or refuses it) has said all it
    will: the console says so at once instead of waiting minutes for counts, and does
    not wait for its own count either (at depth 40 that would never end)."""
    res = _script("good", f"/perft {depth}", "/board", "/quit", timeout=60)
    out = res.stdout
    assert res.returncode == 0 and "Traceback" not in out + res.stderr, out
    assert "the engine does not count go perft: it answered 'bestmove " in out, out
    assert f"fen {Board('egara-guti').fen()}" in out  # the next line ran


def test_a_scripts_last_search_is_judged_before_the_console_ends(tmp_path):
    """The end of a script waits for the search it started, as its next line would: the
    bestmove is read and judged, not cut off by ``quit``."""
    res = subprocess.run([*GUTI, "console", "--", *ENGINE_ARGV], input="/go depth 2\n",
                         capture_output=True, text=True, timeout=60, cwd=str(ROOT))
    assert res.returncode == 0 and "Traceback" not in res.stdout + res.stderr, res.stdout
    assert re.search(r"^bestmove \S+ is legal \(\d+ ms\)$", res.stdout, re.M), res.stdout


def test_a_log_that_cannot_be_written_is_said_once_and_closed(tmp_path):
    res = subprocess.run([*GUTI, "console", "--", *ENGINE_ARGV],
                         input="/log /dev/full\nisready\n/board\nisready\n/quit\n",
                         capture_output=True, text=True, timeout=60, cwd=str(ROOT))
    assert res.returncode == 0 and "Traceback" not in res.stdout + res.stderr, res.stdout
    said = "error: the log /dev/full cannot be written (No space left on device); it is closed"
    assert res.stdout.count(said) == 1, res.stdout


def test_words_left_over_are_a_mistake_not_ignored(tmp_path):
    res = subprocess.run([*GUTI, "console", "--", *ENGINE_ARGV],
                         input="/new pretwa extra junk\n/undo 5\n/go depth 1 depth 2\n/board\n",
                         capture_output=True, text=True, timeout=60, cwd=str(ROOT))
    out = res.stdout
    assert res.returncode == 0 and "Traceback" not in out + res.stderr, out
    assert "error: /new takes at most 1 word after it; 'extra junk' is left over" in out
    assert "error: /undo takes no word after it; '5' is left over" in out
    assert "error: depth is given twice" in out and "bestmove" not in out
    assert f"fen {Board('egara-guti').fen()}" in out  # still Egara-guti: nothing was done


def test_a_script_line_over_a_mebibyte_is_dropped_whole(tmp_path):
    """A 3 MB line, and a 3 MB ``/fen``: each is one error, and no piece of either is run
    as a command or sent to the engine."""
    script = b"x" * 3_000_000 + b"\n/fen " + b"b" * 3_000_000 + b" w\n/board\n/quit\n"
    res = subprocess.run([*GUTI, "console", "--", sys.executable, FAULTY, "--mode", "good"],
                         input=script, capture_output=True, timeout=60, cwd=str(ROOT))
    out = res.stdout.decode()
    assert res.returncode == 0 and "Traceback" not in out + res.stderr.decode(), out[-2000:]
    assert out.count("error: a line longer than 1 MiB: dropped") == 2, out[-2000:]
    assert "> xxx" not in out and "> bbb" not in out and "error: /fen" not in out
    assert f"fen {Board('egara-guti').fen()}" in out


@pytest.mark.slow  # waits out the script's minute for a bestmove once
def test_a_script_gives_up_a_hung_search_once_not_at_every_line(tmp_path):
    res = _script("hang", "/go depth 1", "/board", "/fen", "/quit", timeout=100)
    out = res.stdout
    assert res.returncode == 0 and "Traceback" not in out + res.stderr, out
    assert out.count("no bestmove within 60 s: the search is given up") == 1, out
    assert f"fen {Board('egara-guti').fen()}" in out


@pytest.mark.parametrize("encoding", ["", "utf-8:strict"])
def test_a_script_line_that_is_not_utf8_is_one_error_and_the_script_goes_on(tmp_path, encoding):
    """Whatever the locale's encoding of stdin (strict UTF-8 raised in the reading thread,
    and the console waited for ever)."""
    env = {**os.environ, "PYTHONIOENCODING": encoding}
    res = subprocess.run([*GUTI, "console", "--", sys.executable, FAULTY],
                         input=b"\xff\xfe\n/board\n/quit\n", capture_output=True, timeout=60,
                         cwd=str(ROOT), env=env)
    out = (res.stdout + res.stderr).decode()
    assert res.returncode == 0 and b"Traceback" not in res.stdout + res.stderr, out
    assert "the line is not UTF-8 text" in out and f"fen {Board('egara-guti').fen()}" in out


@pytest.mark.signals
@pytest.mark.parametrize("signo", [signal.SIGTERM, signal.SIGHUP])
def test_a_console_ended_by_a_signal_ends_cleanly(signo):
    """SIGTERM or SIGHUP while a script's input is still open: the console ends with the
    signal's exit status and its engine quit, without a traceback or a fatal error."""
    with killed_at_end(subprocess.Popen(
            [*GUTI, "console", "--", *ENGINE_ARGV], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=str(ROOT))) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:  # the engine is up: its handshake is shown
            if "ugiok in" in line:
                break
        engines = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True,
                                 text=True).stdout.split()
        proc.send_signal(signo)
        rest, _ = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signo, rest
    assert "Fatal Python error" not in rest and "Traceback" not in rest, rest
    assert engines and not any(os.path.exists(f"/proc/{pid}") for pid in engines), engines


@pytest.mark.parametrize("history", ["folder", "/dev/zero", "/dev/full", "/nonexistent/dir/h"])
def test_a_history_file_that_cannot_be_one_is_said_and_the_console_works(tmp_path, history):
    """``GUTI_HISTORY`` naming a directory or a device: one line says so, and the console
    answers as ever (a device was read for ever; a directory broke the prompt)."""
    path = tmp_path if history == "folder" else Path(history)
    s = Session([sys.executable, "-m", "guti.engine"], path)
    s.expect(re.escape(f"error: history file {path}: "))
    s.prompt()
    s.type("/fen 4b/3/3/1/3/3/w4 w")
    s.expect(re.escape("fen 4b/3/3/1/3/3/w4 w 0 1"))
    s.prompt()
    assert s.quit() == 0


def _threads(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


def test_ctrl_c_on_perft_stops_guti_s_own_count_too(tmp_path):
    """``/perft 30`` interrupted: the engine is sent ``stop``, and guti's own count (a
    thread of the console) ends as well, instead of counting on at full speed."""
    s = Session([sys.executable, "-m", "guti.engine"], tmp_path / "history")
    s.prompt()
    idle_threads = _threads(s.child.pid)
    s.type("/perft 30")
    s.expect(r"> go perft 30")
    wait_for(lambda: _threads(s.child.pid) > idle_threads, "guti's own count started", 30)
    s.child.sendintr()
    s.expect(r"> stop")
    wait_for(lambda: _threads(s.child.pid) == idle_threads, "guti's own count stopped", 30)
    s.prompt()
    assert s.quit() == 0


def test_perft_reads_what_earlier_lines_made_the_engine_say_first(tmp_path):
    """An unknown command's ``info string unknown command`` came after ``/perft`` sent its
    ``go perft`` and was taken for a refusal to count: ``/perft`` waits for the engine to
    be ready first."""
    res = subprocess.run([*GUTI, "console", "--", *ENGINE_ARGV], input="foo\n/perft 2\n/quit\n",
                         capture_output=True, text=True, timeout=60, cwd=str(ROOT))
    out = res.stdout
    assert res.returncode == 0 and "Traceback" not in out + res.stderr, out
    assert "does not count go perft" not in out, out
    assert "perft 2: engine answered in" in out, out


def test_a_log_on_a_fifo_is_refused_not_waited_for(tmp_path):
    """``/log`` on a FIFO would wait for a reader for ever, past Ctrl-C."""
    os.mkfifo(tmp_path / "f")
    res = subprocess.run([*GUTI, "console", "--", *ENGINE_ARGV],
                         input=f"/log {tmp_path / 'f'}\n/board\n/quit\n",
                         capture_output=True, text=True, timeout=60, cwd=str(ROOT))
    assert res.returncode == 0 and "Traceback" not in res.stdout + res.stderr, res.stdout
    assert f"error: cannot log to {tmp_path / 'f'}: it is a FIFO, not a file" in res.stdout
    assert f"fen {Board('egara-guti').fen()}" in res.stdout  # the script went on


@pytest.mark.slow  # waits out the script's minute for a bestmove once
def test_the_late_answer_to_a_search_given_up_is_not_judged_as_the_next(tmp_path):
    """A script gives up a search after a minute (``go infinite``) and sends ``stop``; the
    ``bestmove`` that then comes answers that search, not the next ``go``, which is judged
    on its own answer."""
    res = subprocess.run([*GUTI, "console", "--", *ENGINE_ARGV],
                         input="/go infinite\n/go depth 1\n",
                         capture_output=True, text=True, timeout=100, cwd=str(ROOT))
    out = res.stdout
    assert res.returncode == 0 and "Traceback" not in out + res.stderr, out
    assert "(the answer to the search given up: not judged)" in out, out
    assert "NOT legal" not in out and re.search(r"^bestmove \S+ is legal", out, re.M), out
