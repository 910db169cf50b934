"""The tests' one house of shared tools: a UGI program driver, how to run ``guti``, and
the session-wide builds of the compiled bots.

Why one place: the suites used to carry three engine drivers, a hard-coded
``.venv/bin/guti`` and bot builds that wrote into the source tree. Each of those is now
written once here; test modules import the helpers (``from tests.conftest import ...``)
and ask for the bot builds as fixtures. PDN files are read with guti's own reader
(:mod:`guti.referee.game.pdn_reader`), which shares no code with the writer.

- ``UgiProgram``: a UGI program (the reference engine, a bot, a test engine) started as a
  process and driven line by line; every read has a deadline, so a silent program fails
  the test instead of hanging the suite.
- ``GUTI``: the ``guti`` command of the interpreter running the tests (its installed entry
  point next to ``sys.executable``, else ``python -m guti.cli``).
- ``c_bot`` / ``java_bot`` (session fixtures): the C and Java bots built into a temporary
  directory, never into ``bots/``, once for all pytest-xdist workers (``built_once``); a
  missing toolchain skips with a reason naming it.
- ``bot_argv(name)`` (fixture) / ``argv_of_bot(request, name)``: the command line of any
  bundled bot by name (see ``BOT_NAMES``).
- ``wait_for(condition, what)``: wait for an event outside the pipes with a deadline (tests
  never sleep a fixed time); ``survivors(pidfile)``: processes of a test engine still alive.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import queue
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from guti.referee.game.pdn_reader import PdnGame, iter_pdn, iter_pdn_file
from guti.referee.process.group import enable_subreaper

ROOT = Path(__file__).resolve().parents[1]

#: The Python processes the tests start (guti, the reference engine, the Python bots) keep
#: the bytecode they compile in one folder outside the source tree, as an installed guti
#: keeps its own: where ``PYTHONDONTWRITEBYTECODE`` is set, each of them would otherwise
#: compile every module it imports again (0.1 s of CPU for a short ``guti match``), a good
#: part of the fast tier's time. The compiled files are written atomically, so the
#: workers of a parallel run share the folder safely.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
os.environ.setdefault("PYTHONPYCACHEPREFIX",
                      os.path.join(tempfile.gettempdir(), f"guti-tests-pycache-{os.getuid()}"))


def pytest_configure(config: pytest.Config) -> None:
    """Each test process (every xdist worker too) becomes a child subreaper, as guti makes
    itself: an orphan of a killed guti or referee comes back to the test process, which
    reaps it once it has ended (:func:`survivors`), instead of to the machine's first
    process, which in a container may never reap it and leave a zombie that would count
    as a survivor. Done at start so no test depends on which ran before it."""
    enable_subreaper()


BOTS_DIR = ROOT / "bots"
ENGINE_ARGV = [sys.executable, "-m", "guti.engine"]
LINE_TIMEOUT = 30.0  # generous: a shared, noisy 2-core machine


def _guti_command() -> list[str]:
    """The installed ``guti`` entry point of this interpreter, else the module itself."""
    script = Path(sys.executable).parent / "guti"
    return [str(script)] if script.exists() else [sys.executable, "-m", "guti.cli"]


#: How to run ``guti`` (prefix of an argv): never a path into a particular virtualenv.
GUTI: list[str] = _guti_command()


# --------------------------------------------------------------------------- UGI driver


class UgiProgram:
    """A UGI program as a process: send lines, read lines with deadlines.

    A reader thread moves stdout lines into a queue, so a read can time out instead of
    hanging. The program runs from ``cwd`` (default: the repository root; bots are run
    from ``/`` by their suite to show they find their own files).
    """

    def __init__(self, argv: list[str], cwd: Path | str = ROOT) -> None:
        self.argv = argv
        self.proc = subprocess.Popen(
            argv, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL)
        self.lines: queue.Queue[str | None] = queue.Queue()
        self._reader = threading.Thread(target=self._pump, daemon=True)
        self._reader.start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            self.lines.put(raw.decode("utf-8", "replace").rstrip("\r\n"))
        self.lines.put(None)

    # -- raw lines

    def send(self, line: str | bytes) -> None:
        assert self.proc.stdin is not None
        data = line if isinstance(line, bytes) else line.encode()
        self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()

    def read(self, timeout: float = LINE_TIMEOUT) -> str:
        """The next line; fails the test if none comes within ``timeout`` s or output ends."""
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"{self.argv[-1]}: no output within {timeout:g} s") from None
        if line is None:
            raise AssertionError(f"{self.argv[-1]}: closed its output "
                                 f"(exit code {self.proc.poll()})")
        return line

    def read_until(self, until: str | Callable[[str], bool],
                   timeout: float = LINE_TIMEOUT) -> list[str]:
        """Lines up to and including the first that starts with ``until`` (or satisfies it),
        all within one deadline of ``timeout`` s."""
        matches = until if callable(until) else (lambda line: line.startswith(until))
        deadline = time.monotonic() + timeout
        got: list[str] = []
        while True:
            got.append(self.read(max(0.01, deadline - time.monotonic())))
            if matches(got[-1]):
                return got

    def sync(self, timeout: float = LINE_TIMEOUT) -> list[str]:
        """Send ``isready``; every line before ``readyok`` (the answers to what was sent)."""
        self.send("isready")
        return self.read_until(lambda line: line == "readyok", timeout)[:-1]

    def ask(self, line: str | bytes, timeout: float = LINE_TIMEOUT) -> list[str]:
        """Send ``line`` then ``isready``; every line before ``readyok``."""
        self.send(line)
        return self.sync(timeout)

    # -- protocol helpers

    def handshake(self) -> list[str]:
        """``ugi`` up to ``ugiok`` (the lines returned), then ``uginewgame`` answered."""
        self.send("ugi")
        lines = self.read_until(lambda line: line == "ugiok")
        self.ask("uginewgame")
        return lines

    def variant(self, game: str) -> None:
        self.send(f"setoption name UGI_Variant value {game}")
        self.send("uginewgame")

    def query(self, what: str) -> str:
        """The value of ``query what`` (the word after ``response``)."""
        self.send(f"query {what}")
        return self.read_until("response ")[-1].split()[1]

    def fen(self) -> str:
        """The current position's FEN, from the ``fen`` line of ``d``."""
        fens = [line[len("fen "):] for line in self.ask("d") if line.startswith("fen ")]
        assert len(fens) == 1, f"'d' gave {len(fens)} fen lines"
        return fens[0]

    def perft(self, depth: int, timeout: float = 120.0) -> tuple[dict[str, int], int, list[str]]:
        """``go perft depth``: (move -> count, total, moves in the order sent); each
        divide line must be ``MOVE: COUNT``."""
        self.send(f"go perft {depth}")
        lines = self.read_until("nodes ", timeout)
        divide: dict[str, int] = {}
        order: list[str] = []
        for line in lines[:-1]:
            move, _, count = line.partition(": ")
            assert count.isdigit(), f"unexpected perft line {line!r}"
            divide[move] = int(count)
            order.append(move)
        return divide, int(lines[-1].split()[1]), order

    def bestmove(self, go: str = "go depth 1", timeout: float = LINE_TIMEOUT) -> str:
        self.send(go)
        return self.read_until("bestmove ", timeout)[-1].split()[1]

    def close(self) -> int:
        """``quit``, then the exit code (killed after 10 s if it does not go)."""
        if self.proc.poll() is None:
            try:
                self.send("quit")
            except OSError:
                pass
        try:
            return self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"{self.argv[-1]}: still running 10 s after quit") from None
        finally:
            self._reader.join(timeout=5)  # output ends with the process: let it drain
            for stream in (self.proc.stdin, self.proc.stdout):
                try:
                    if stream is not None:
                        stream.close()
                except OSError:
                    pass


def parse_pdn(text: str, source: str = "<pdn>", game: str | None = None) -> list[PdnGame]:
    """Every game of a PDN text at once, as the tests compare them (guti reads them one
    at a time: :func:`~guti.referee.game.pdn_reader.iter_pdn`)."""
    return list(iter_pdn(text, source, game))


def read_pdn_file(path: str, game: str | None = None, what: str = "PDN file") -> list[PdnGame]:
    """Every game of a PDN file at once (see :func:`parse_pdn`)."""
    return list(iter_pdn_file(path, game, what))


@contextlib.contextmanager
def killed_at_end(proc: subprocess.Popen[str]) -> Iterator[subprocess.Popen[str]]:
    """``proc`` for the block, killed and reaped at its end if it still runs (a test that
    fails half-way never leaves a guti behind)."""
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    """Poll ``condition`` until true; fail naming ``what`` after ``timeout`` s.

    Why: a test that must wait for something outside its pipes (a pid file, a database
    row, a process) waits for that event with a deadline, never a fixed sleep."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout:g} s")
        time.sleep(0.02)


# --------------------------------------------------------------------------- processes


def survivors(pidfile: Path) -> list[str]:
    """Processes listed in ``pidfile`` (pid + start time) that still exist, zombies included."""
    left = []
    if not pidfile.exists():
        return left
    for line in pidfile.read_text().split("\n"):
        if not line.strip():
            continue
        pid, start = line.split()
        try:
            data = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        fields = data[data.rfind(")") + 2 :].split()
        if fields[19] != start:
            continue
        if fields[0] == "Z" and int(fields[1]) == os.getpid():
            # Ended, and handed to this test process to reap: in-process tests made it a
            # child subreaper (as guti makes itself), so an orphan of a killed guti lands here.
            with contextlib.suppress(ChildProcessError):
                os.waitpid(int(pid), os.WNOHANG)
            continue
        left.append(f"pid {pid} state {fields[0]} parent {fields[1]}")
    return left


# --------------------------------------------------------------------------- databases


def rows(db: Path, sql: str) -> list[tuple]:
    """The rows ``sql`` selects from the SQLite file ``db`` (the tests' own reader)."""
    with sqlite3.connect(db) as conn:
        return conn.execute(sql).fetchall()


def games_stored(db: Path) -> int:
    """Games in a tournament database so far (0 before it exists or has its tables)."""
    try:
        return rows(db, "SELECT COUNT(*) FROM games")[0][0] if db.exists() else 0
    except sqlite3.OperationalError:
        return 0


# --------------------------------------------------------------------------- bots

#: Every bundled bot, by the name its tests use.
BOT_NAMES = ("python-random", "python-greedy", "js", "c", "java")


def _missing(*tools: str) -> list[str]:
    return [tool for tool in tools if shutil.which(tool) is None]


def build_c_bot(out: Path) -> list[str]:
    """Build bots/c with its Makefile into ``out`` (warnings are errors here); its argv."""
    if missing := _missing("gcc", "make"):
        pytest.skip(f"{' and '.join(missing)} not installed: cannot build bots/c")
    res = subprocess.run(["make", "-B", "-C", str(BOTS_DIR / "c"), f"OUT={out}"],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "warning" not in (res.stdout + res.stderr).lower(), res.stderr
    return [str(out / "bot")]


def build_java_bot(out: Path) -> list[str]:
    """Compile bots/java into ``out`` (``javac -d``); its argv."""
    if missing := _missing("javac", "java"):
        pytest.skip(f"{' and '.join(missing)} not installed: cannot build bots/java")
    sources = sorted(str(p) for p in (BOTS_DIR / "java").glob("*.java"))
    res = subprocess.run(["javac", "-d", str(out), *sources],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    return ["java", "-cp", str(out), "Bot"]


def built_once(factory: pytest.TempPathFactory, name: str,
               build: Callable[[Path], list[str]]) -> list[str]:
    """``build(folder)`` (a bot's argv) run once per test session, also when pytest-xdist
    spreads the session over worker processes: the first worker builds into the folder
    the workers share (under a lock), the others take its argv from there. Why: a Java
    compile costs seconds of CPU, which each worker would otherwise spend again."""
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        return build(factory.mktemp(name))
    shared = factory.getbasetemp().parent / name
    with open(shared.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        argv_file = shared / "argv.json"
        if argv_file.exists():
            return list(json.loads(argv_file.read_text()))
        shared.mkdir(exist_ok=True)
        argv = build(shared)
        argv_file.write_text(json.dumps(argv))
        return argv


@pytest.fixture(scope="session")
def c_bot(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The C bot, built once per session into a temporary directory."""
    return built_once(tmp_path_factory, "c-bot", build_c_bot)


@pytest.fixture(scope="session")
def java_bot(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The Java bot, compiled once per session into a temporary directory."""
    return built_once(tmp_path_factory, "java-bot", build_java_bot)


@pytest.fixture(scope="session")
def js_bot() -> list[str]:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node not installed: cannot run bots/js")
    return [node, str(BOTS_DIR / "js" / "bot.js")]


def argv_of_bot(request: pytest.FixtureRequest, name: str) -> list[str]:
    """The command line of the bot ``name`` (one of ``BOT_NAMES``), building it first if it
    needs building (through the session fixtures); skips when its toolchain is missing."""
    if name == "python-random":
        return [sys.executable, str(BOTS_DIR / "python" / "random_bot.py")]
    if name == "python-greedy":
        return [sys.executable, str(BOTS_DIR / "python" / "greedy_bot.py")]
    if name in ("js", "c", "java"):
        return request.getfixturevalue(f"{name}_bot")
    raise ValueError(f"no bot named {name!r}")


def argv_of_bot_or_reason(request: pytest.FixtureRequest, name: str) -> list[str] | str:
    """The bot's argv, or the reason it cannot run (for fixtures that gather many bots)."""
    try:
        return argv_of_bot(request, name)
    except pytest.skip.Exception as exc:
        return str(exc.msg)


@pytest.fixture
def bot_argv(request: pytest.FixtureRequest) -> Callable[[str], list[str]]:
    """``bot_argv(name)``: ``argv_of_bot`` for this test."""
    return lambda name: argv_of_bot(request, name)


@pytest.fixture
def engine() -> Iterator[UgiProgram]:
    """The reference engine as a process, after ``ugi`` and ``uginewgame``."""
    eng = UgiProgram(ENGINE_ARGV)
    eng.handshake()
    yield eng
    eng.close()
