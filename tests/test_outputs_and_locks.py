"""Outputs and locks through the real ``guti``: no device, FIFO, symlink, hard link or
directory is ever replaced; every output is checked against every other and against the
database by device and inode before any game; a run's lock on its database and on its
outputs holds for every name of the file (reliability page, "Outputs and locks").

No test needs root: devices are reached through a symlink to ``/dev/null`` (so that even
a guti that wrongly renamed over the path would replace the link, never the device), and
the other files are FIFOs, symlinks and hard links in the test's own folder.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import GUTI, ROOT, killed_at_end, parse_pdn, wait_for

FAULTY = str(ROOT / "tests" / "engines" / "faulty.py")
PY = sys.executable
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
PAIR = ["-engine", f"cmd={PY}", f"args={FAULTY} --seed 1", "name=a",
        "-engine", f"cmd={PY}", f"args={FAULTY} --seed 2", "name=b", "-each", "tc=30+0.5"]


def guti(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*GUTI, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=180, env=ENV)


def one_line_exit_2(done: subprocess.CompletedProcess, *words: str) -> str:
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def games_in(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT COUNT(*) FROM games").fetchone()[0]


@pytest.fixture
def finished_db(tmp_path: Path) -> Path:
    done = guti("tournament", *PAIR, "-games", "2", "-db", "t.db", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return tmp_path / "t.db"


# ----------------------------------------------------------------------------- devices
def test_a_device_is_written_into_and_never_replaced(tmp_path: Path) -> None:
    """Every output, of every command, through symlinks to /dev/null: exit 0, and each
    link still points at the device (a rename over the path would have made it a file;
    a match used to fail on fsync with "Invalid argument")."""
    names = ["pdn", "epd", "log", "report", "json", "html", "err"]
    for name in names:
        (tmp_path / name).symlink_to(os.devnull)
    with_stderr = [*PAIR[:4], "stderr=err", *PAIR[4:8], "stderr=err", *PAIR[8:]]
    runs = [
        ("tournament", *with_stderr, "-games", "2", "-db", "t.db", "-pdnout", "pdn",
         "-epdout", "epd", "-log", "file=log", "-report", "report"),
        ("tournament", *PAIR, "-games", "2", "-db", "t.db", "-resume", "-pdnout", "pdn",
         "-epdout", "epd", "-report", "report"),
        ("match", *with_stderr, "-games", "2", "-pdnout", "pdn", "-epdout", "epd",
         "-log", "file=log"),
        ("export", "t.db", "-pdn", "pdn", "-json", "json", "-epd", "epd"),
        ("report", "t.db", "-html", "html"),
    ]
    for args in runs:
        done = guti(*args, cwd=tmp_path)
        assert done.returncode == 0, (args[0], done.stdout, done.stderr)
        for name in names:
            assert os.readlink(tmp_path / name) == os.devnull, (args[0], name)
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("t.db")) == \
        sorted(names)  # no .tmp, .sync or .bak left anywhere


class FifoReader:
    """Reads a FIFO to its end in a thread (what a pipe's reader would see)."""

    def __init__(self, path: Path) -> None:
        os.mkfifo(path)
        self.text = ""
        self.done = threading.Event()
        self._thread = threading.Thread(target=self._read, args=(path,), daemon=True)
        self._thread.start()

    def _read(self, path: Path) -> None:
        with open(path, encoding="utf-8") as fh:
            self.text = fh.read()
        self.done.set()

    def wait(self) -> str:
        assert self.done.wait(60), "the FIFO's writer never closed it"
        return self.text


def test_a_fifo_output_is_written_into_and_stays_a_fifo(tmp_path: Path) -> None:
    reader = FifoReader(tmp_path / "games.pdn")
    done = guti("tournament", *PAIR, "-games", "2", "-db", "t.db", "-pdnout", "games.pdn",
                cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert stat.S_ISFIFO(os.lstat(tmp_path / "games.pdn").st_mode)
    assert len(parse_pdn(reader.wait())) == 2
    reader = FifoReader(tmp_path / "games.json")
    done = guti("export", "t.db", "-json", "games.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert stat.S_ISFIFO(os.lstat(tmp_path / "games.json").st_mode)
    assert reader.wait().count('"game_id"') == 2


# ----------------------------------------------------------------------------- links
def test_an_export_to_dev_stdout_goes_down_the_pipe(finished_db: Path) -> None:
    """``/dev/stdout`` is a link to a pipe with no name: written through the link, not
    to the name it resolves to (``pipe:[...]``, which is no file). The pipe gets the
    data alone; the count goes to stderr."""
    done = guti("export", "t.db", "-epd", "/dev/stdout", cwd=finished_db.parent)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 2 and all('variant "egara-guti"' in line for line in lines), lines
    assert done.stderr == "2 games written to /dev/stdout\n"


def test_a_symlinked_output_is_written_through_to_its_target(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "report.html").symlink_to("out/real.html")  # dangling until written
    (tmp_path / "live.pdn").symlink_to("out/real.pdn")
    done = guti("tournament", *PAIR, "-games", "2", "-db", "t.db", "-pdnout", "live.pdn",
                "-report", "report.html", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert os.path.islink(tmp_path / "report.html") and os.path.islink(tmp_path / "live.pdn")
    assert "<html" in (tmp_path / "out" / "real.html").read_text()
    # the run, its report written, leaves its database alone: no SQLite side file
    assert sorted(p.name for p in tmp_path.glob("t.db*")) == ["t.db"]
    # A resume that finds games the database lacks keeps them next to the target.
    (tmp_path / "out" / "real.pdn").write_text("[Event \"not from this database\"]\n")
    done = guti("tournament", *PAIR, "-games", "2", "-db", "t.db", "-resume",
                "-pdnout", "live.pdn", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert os.path.islink(tmp_path / "live.pdn")
    assert len(parse_pdn((tmp_path / "out" / "real.pdn").read_text())) == 2
    assert "not from this database" in (tmp_path / "out" / "real.pdn.bak").read_text()


def test_a_backup_of_an_output_is_never_overwritten(tmp_path: Path) -> None:
    """Games an output file held that the database lacks may be in no other file: each
    resume that finds such games keeps them in a backup of its own."""
    args = ("tournament", *PAIR, "-games", "2", "-db", "t.db", "-pdnout", "t.pdn")
    assert guti(*args, cwd=tmp_path).returncode == 0
    for n, backup in enumerate(("t.pdn.bak", "t.pdn.bak.2", "t.pdn.bak.3"), 1):
        (tmp_path / "t.pdn").write_text(f'[Event "the only copy {n}"]\n')
        done = guti(*args, "-resume", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert f"kept it as {backup}" in done.stdout, done.stdout
    for n, backup in enumerate(("t.pdn.bak", "t.pdn.bak.2", "t.pdn.bak.3"), 1):
        assert (tmp_path / backup).read_text() == f'[Event "the only copy {n}"]\n'
    assert len(parse_pdn((tmp_path / "t.pdn").read_text())) == 2


def test_one_database_under_two_names_is_refused_by_standings(finished_db: Path) -> None:
    """Its games would count twice, whichever names are given: a hard link, a symlink,
    ``./t.db`` for ``t.db``."""
    folder = finished_db.parent
    os.link(finished_db, folder / "hard.db")
    (folder / "link.db").symlink_to("t.db")
    for other in ("hard.db", "link.db", "./t.db"):
        done = guti("standings", "t.db", other, cwd=folder)
        one_line_exit_2(done, f"{other} is given twice")
    # A copy of the file is the same tournament too; another run of the same settings is not.
    shutil.copy(finished_db, folder / "copy.db")
    one_line_exit_2(guti("standings", "t.db", "copy.db", cwd=folder),
                    "t.db and copy.db hold the same tournament")
    again = guti("tournament", *PAIR, "-games", "2", "-db", "again.db", cwd=folder)
    assert again.returncode == 0, again.stderr
    both = guti("standings", "t.db", "again.db", cwd=folder)
    assert both.returncode == 0 and "4 games" in both.stdout, both.stdout + both.stderr


def test_an_export_over_a_hard_linked_file_keeps_every_name(finished_db: Path) -> None:
    folder = finished_db.parent
    (folder / "a.pdn").write_text("old\n")
    os.link(folder / "a.pdn", folder / "b.pdn")
    done = guti("export", "t.db", "-pdn", "a.pdn", cwd=folder)
    assert done.returncode == 0, done.stderr
    assert os.path.samefile(folder / "a.pdn", folder / "b.pdn")
    assert len(parse_pdn((folder / "b.pdn").read_text())) == 2


# ----------------------------------------------------------------------------- checks
def test_a_report_naming_a_directory_is_refused_before_any_game(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    done = guti("tournament", *PAIR, "-games", "2", "-db", "t.db", "-report", "d",
                cwd=tmp_path)
    one_line_exit_2(done, "-report d", "directory")
    assert not (tmp_path / "t.db").exists()


def test_a_report_whose_folder_cannot_be_made_is_refused_before_any_game(
        tmp_path: Path) -> None:
    (tmp_path / "f").write_text("a file where the report's folder should be\n")
    done = guti("tournament", *PAIR, "-games", "2", "-db", "t.db", "-report", "f/r.html",
                cwd=tmp_path)
    one_line_exit_2(done, f"cannot create the folder for f/r.html: {tmp_path / 'f'} is not "
                          "a folder")  # (not makedirs' "File exists")
    assert "Finished game" not in done.stdout and not (tmp_path / "t.db").exists()


def test_a_file_being_written_whole_is_refused_to_a_second_writer(finished_db: Path) -> None:
    """A whole-file write goes through ``FILE.tmp``: a second writer of a file that is not
    there yet finds that side file locked, and is refused instead of sharing it."""
    from guti.referee.game.file_lock import FileLocks

    folder = finished_db.parent
    with FileLocks() as locks:  # a first writer, in the middle of its write
        locks.acquire([("export -pdn", str(folder / "new.pdn.tmp"))])
        done = guti("export", "t.db", "-pdn", "new.pdn", cwd=folder)
        one_line_exit_2(done, "new.pdn: in use", f"pid {os.getpid()}")
    assert not (folder / "new.pdn").exists()
    assert guti("export", "t.db", "-pdn", "new.pdn", cwd=folder).returncode == 0
    assert len(parse_pdn((folder / "new.pdn").read_text())) == 2


#: Outputs that name the database, or one another, each under some other name.
CLASHES = [
    ["-report", "t.db"],
    ["-report", "hard.db"],
    ["-report", "link.db"],
    ["-report", "r.pdn", "-pdnout", "r.pdn"],
    ["-report", "r.pdn", "-pdnout", "hard.pdn"],
    ["-report", "t.db-wal"],
    ["-log", "file=link.db"],
]


def test_the_report_is_checked_against_every_output_and_the_database(
        finished_db: Path) -> None:
    folder = finished_db.parent
    (folder / "r.pdn").write_text("keep\n")
    os.link(finished_db, folder / "hard.db")
    os.link(folder / "r.pdn", folder / "hard.pdn")
    (folder / "link.db").symlink_to("t.db")
    before = finished_db.read_bytes()
    for outputs in CLASHES:
        done = guti("tournament", *PAIR, "-games", "2", "-db", "t.db", "-resume", *outputs,
                    cwd=folder)
        one_line_exit_2(done, "same file")
        assert finished_db.read_bytes() == before and games_in(finished_db) == 2, outputs
        assert (folder / "r.pdn").read_text() == "keep\n", outputs


def test_report_and_export_never_write_over_the_database_or_each_other(
        finished_db: Path) -> None:
    folder = finished_db.parent
    os.link(finished_db, folder / "hard.db")
    (folder / "x.pdn").write_text("keep\n")
    os.link(folder / "x.pdn", folder / "hard.pdn")
    before = finished_db.read_bytes()
    for args in (["report", "t.db", "-html", "t.db"], ["report", "t.db", "-html", "hard.db"],
                 ["export", "t.db", "-json", "./t.db"],
                 ["export", "t.db", "-pdn", "x.pdn", "-epd", "hard.pdn"]):
        one_line_exit_2(guti(*args, cwd=folder), "same file")
        assert finished_db.read_bytes() == before and games_in(finished_db) == 2, args
        assert (folder / "x.pdn").read_text() == "keep\n", args


# ----------------------------------------------------------------------------- locks
def start_running(tmp_path: Path, *args: str) -> subprocess.Popen:
    """A tournament that is under way: its first engine hangs in its first move (and says
    so in ``hung.mark``), so the run goes on until it is stopped."""
    mark = tmp_path / "hung.mark"
    seen = mark.stat().st_size if mark.exists() else 0
    hung = ["-engine", f"cmd={PY}", f"args={FAULTY} --mode hang --mark {mark}", "name=h",
            "-engine", f"cmd={PY}", f"args={FAULTY}", "name=g", "-each", "tc=60+1"]
    run = subprocess.Popen([*GUTI, "tournament", *hung, "-games", "2", *args], cwd=tmp_path,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    try:
        wait_for(lambda: run.poll() is None and mark.exists() and mark.stat().st_size > seen,
                 "a game of the running guti under way", 60)
    except BaseException:
        run.kill()
        run.wait(60)
        raise
    return run


@contextlib.contextmanager
def running(tmp_path: Path, *args: str) -> Iterator[subprocess.Popen]:
    """:func:`start_running`, stopped with SIGTERM at the end (exit 130)."""
    run = start_running(tmp_path, *args)
    try:
        yield run
    finally:
        run.send_signal(signal.SIGTERM)
        assert run.wait(60) == 130


def test_the_database_lock_holds_for_every_name_of_the_file(tmp_path: Path) -> None:
    with running(tmp_path, "-db", "t.db") as first:
        os.link(tmp_path / "t.db", tmp_path / "hard.db")
        (tmp_path / "link.db").symlink_to("t.db")
        for name in ("hard.db", "link.db", "./t.db", str(tmp_path / "t.db")):
            done = guti("tournament", *PAIR, "-games", "2", "-db", name, "-resume",
                        cwd=tmp_path)
            one_line_exit_2(done, f"{name} (-db) is in use", f"pid {first.pid}")
    assert games_in(tmp_path / "t.db") == 0
    assert not list(tmp_path.glob("*.lock"))  # the lock is the file's own: nothing left
    with sqlite3.connect(tmp_path / "t.db") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_a_report_named_by_a_running_tournament_is_refused_to_another(
        tmp_path: Path) -> None:
    with running(tmp_path, "-db", "a.db", "-report", "r.html") as first:
        done = guti("tournament", *PAIR, "-games", "2", "-db", "b.db", "-report", "r.html",
                    cwd=tmp_path)
        one_line_exit_2(done, "r.html (-report) is in use", f"pid {first.pid}")
    assert not (tmp_path / "b.db").exists()
    assert not (tmp_path / "r.html").exists()  # held empty, and not written: interrupted


def test_the_lock_of_a_killed_guti_is_gone_with_it(tmp_path: Path) -> None:
    first = start_running(tmp_path, "-db", "t.db", "-pdnout", "t.pdn")
    first.kill()
    first.wait(60)
    with running(tmp_path, "-db", "t.db", "-pdnout", "t.pdn", "-resume") as second:
        assert second.poll() is None  # not refused: it plays


#: A second run's engines, each with what it shares with the running one.
SECOND = ["-engine", f"cmd={PY}", f"args={FAULTY}", "name=a",
          "-engine", f"cmd={PY}", f"args={FAULTY}", "name=b"]


@pytest.mark.slow  # a real match or two runs: seconds; in the slow tier
def test_a_second_run_sharing_an_output_is_refused_and_moves_nothing(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    with running(tmp_path, "-db", "a.db", "-pdnout", "p.pdn", "-log", "file=t.log",
                 "-engine", f"cmd={PY}", f"args={FAULTY}", "name=e", "stderr=t.err") as first:
        os.link(tmp_path / "p.pdn", tmp_path / "hard.pdn")
        (tmp_path / "link.pdn").symlink_to("p.pdn")
        for outputs in (["-pdnout", "p.pdn"], ["-pdnout", "./sub/../p.pdn"],
                        ["-pdnout", "hard.pdn"], ["-epdout", "link.pdn"],
                        ["-log", "file=t.log"], ["-each", "tc=30+0.5", "stderr=t.err"]):
            each = [] if outputs[0] == "-each" else ["-each", "tc=30+0.5"]
            for command in ("tournament", "match"):
                extra = ["-db", "b.db"] if command == "tournament" else []
                done = guti(command, *SECOND, *each, "-games", "2", *extra, *outputs,
                            cwd=tmp_path)
                one_line_exit_2(done, "is in use", f"pid {first.pid}")
        assert not list(tmp_path.glob("*.bak")) and not (tmp_path / "b.db").exists()


@pytest.mark.signals  # a large export, ended by SIGTERM and SIGHUP as it writes
@pytest.mark.parametrize("signo", [signal.SIGTERM, signal.SIGHUP])
def test_an_export_ended_by_a_signal_leaves_its_file_as_it_was(finished_db: Path,
                                                               signo: int) -> None:
    """SIGTERM or SIGHUP in the middle of a whole-file write: the half-written ``FILE.tmp``
    is removed and the file it was to replace is left as it was (before, the signal's
    default action ended guti at once and left the side file)."""
    folder = finished_db.parent
    with sqlite3.connect(finished_db) as conn:  # 2 games doubled to 32,768: seconds of export
        for _ in range(14):
            games, seqs = conn.execute("SELECT MAX(game_id) + 1, MAX(seq) FROM games").fetchone()
            for table in ("schedule", "games"):
                columns = [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]
                copied = ", ".join({"seq": f"seq + {seqs}", "game_id": f"game_id + {games}",
                                    "pair_id": f"pair_id + {games}"}.get(c, c) for c in columns)
                conn.execute(f"INSERT INTO {table} ({', '.join(columns)}) SELECT {copied} "
                             f"FROM {table}")
    (folder / "x.pdn").write_text("the old file\n")
    with killed_at_end(subprocess.Popen(
            [*GUTI, "export", "t.db", "-pdn", "x.pdn"], cwd=folder, env=ENV,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)) as export:
        wait_for(lambda: (folder / "x.pdn.tmp").exists() or export.poll() is not None,
                 "the export writing x.pdn.tmp", 60)
        export.send_signal(signo)
        out, err = export.communicate(timeout=60)
    assert export.returncode == 128 + signo, out + err
    assert "Traceback" not in err, err
    assert (folder / "x.pdn").read_text() == "the old file\n"
    assert not (folder / "x.pdn.tmp").exists()


def test_an_output_on_a_side_file_of_the_database_names_the_database(
        finished_db: Path) -> None:
    """``-json t.db-wal`` would write over the database's write-ahead log: the refusal
    names the database and which of its files."""
    before = finished_db.read_bytes()
    done = guti("export", "t.db", "-json", "t.db-wal", cwd=finished_db.parent)
    one_line_exit_2(done, "-json t.db-wal and database t.db (its t.db-wal) are the same file")
    journal = guti("export", "t.db", "-pdn", "t.db-journal", cwd=finished_db.parent)
    one_line_exit_2(journal, "-pdn t.db-journal and database t.db (its t.db-journal) are the "
                             "same file")
    assert finished_db.read_bytes() == before


def test_no_output_is_another_database_or_one_of_its_side_files(finished_db: Path) -> None:
    """Another tournament's database (running or not) is no file this run knows of: its
    write-ahead log or shared memory, or the database itself, as a PDN, EPD or JSON
    output, would damage it. Each is refused in one line, and the database is untouched."""
    here = finished_db.parent
    before = finished_db.read_bytes()
    for args, said in (
            (["-pdnout", "file=t.db"], "-pdnout t.db: is a database (SQLite)"),
            (["-epdout", "file=t.db-wal"], "-epdout t.db-wal: is the write-ahead log of the "
                                           "database t.db"),
            (["-log", "file=t.db-shm"], "-log t.db-shm: is the shared-memory file of the "
                                        "database t.db")):
        done = guti("tournament", *PAIR, "-games", "2", "-db", "other.db", *args, cwd=here)
        one_line_exit_2(done, said)
    one_line_exit_2(guti("tournament", *PAIR, "-games", "2", "-db", "t.db-wal", cwd=here),
                    "-db t.db-wal: is the write-ahead log of the database t.db")
    assert finished_db.read_bytes() == before and not (here / "other.db").exists()


@pytest.mark.parametrize("command", [["standings"], ["report", "-html", "x.html"],
                                     ["export", "-json", "x.json"], ["serve"]])
def test_a_database_that_is_no_file_is_worded_alike_by_every_command(
        command: list[str], tmp_path: Path) -> None:
    (tmp_path / "adir").mkdir()
    for path, what in (("adir", "directory"), ("/dev/zero", "character device")):
        done = guti(command[0], path, *command[1:], cwd=tmp_path)
        one_line_exit_2(done, f"{path}: is a {what}, not a database file")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adir"]


def test_a_resume_keeps_the_sprt_it_began_with(tmp_path: Path) -> None:
    """The SPRT decides when a tournament ends: a resume without it, or with another,
    would play on under another rule. It is refused in one line; with its own it goes on."""
    sprt = ["-sprt", "elo0=0", "elo1=10"]
    first = guti("tournament", *PAIR, "-games", "2", "-db", "t.db", *sprt, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    began = "t.db was started with -sprt elo0=0 elo1=10 alpha=0.05 beta=0.05 model=normalized"
    for other, now in (([], "without -sprt"),
                       (["-sprt", "elo0=0", "elo1=5"], "with -sprt elo0=0 elo1=5 ")):
        done = guti("tournament", *PAIR, "-games", "2", "-rounds", "1", "-db", "t.db",
                    "-resume", *other, cwd=tmp_path)
        one_line_exit_2(done, f"{began}, and this run is {now}")
    again = guti("tournament", *PAIR, "-games", "2", "-db", "t.db", "-resume", *sprt,
                 cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert games_in(tmp_path / "t.db") == 2


def test_a_second_config_file_is_a_mistake(tmp_path: Path) -> None:
    """``guti tournament a.toml -config b.toml`` read a.toml and dropped b.toml unsaid."""
    for name, games in (("a.toml", 2), ("b.toml", 6)):
        (tmp_path / name).write_text(f"games = {games}\n")
    for command in ("tournament", "tune"):
        for args in (["a.toml", "-config", "b.toml"], ["-config", "a.toml", "-config", "b.toml"]):
            done = guti(command, *args, cwd=tmp_path)
            one_line_exit_2(done, "a second config file 'b.toml' after 'a.toml'")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.toml", "b.toml"]


def test_standings_of_three_engines_refuse_an_sprt(tmp_path: Path) -> None:
    """``-sprt`` tests one pair: the tournament refuses it for three engines, and so does
    ``guti standings`` (it was ignored there without a word)."""
    third = ["-engine", f"cmd={PY}", f"args={FAULTY} --seed 3", "name=c"]
    done = guti("tournament", *PAIR, *third, "-games", "2", "-db", "t.db", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    refused = guti("standings", "t.db", "-sprt", "elo0=0", "elo1=5", cwd=tmp_path)
    one_line_exit_2(refused, "-sprt: an SPRT tests one pair of engines, got 3 engines")


def test_an_sprt_is_refused_for_games_not_played_in_pairs_with_colours_reversed(
        tmp_path: Path) -> None:
    """An SPRT counts game pairs with the colours reversed: with ``-noswap`` both games of
    a pair have the same colours (it would measure who moves first), and with an odd
    ``-games`` no pair completes. The tournament refuses both, and so do ``guti standings
    -sprt`` and ``guti report -sprt`` on a tournament played so."""
    refused = guti("tournament", *PAIR, "-games", "2", "-noswap", "-sprt", "elo0=0",
                   "elo1=5", "-db", "n.db", cwd=tmp_path)
    one_line_exit_2(refused, "-sprt: not with -noswap")
    assert not (tmp_path / "n.db").exists()
    for flags, said in ((["-games", "1", "-rounds", "2"], "was played with -games 1"),
                        (["-games", "2", "-noswap"], "was played with -noswap")):
        done = guti("tournament", *PAIR, *flags, "-db", "o.db", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        one_line_exit_2(guti("standings", "o.db", "-sprt", "elo0=0", "elo1=5", cwd=tmp_path),
                        f"-sprt: o.db {said}")
        one_line_exit_2(guti("report", "o.db", "-html", "r.html", "-sprt", "elo0=0", "elo1=5",
                             cwd=tmp_path), f"-sprt: o.db {said}")
        assert not (tmp_path / "r.html").exists()
        (tmp_path / "o.db").unlink()


def test_a_run_refuses_a_database_with_other_names(finished_db: Path) -> None:
    """SQLite finds a database's write-ahead log by the name it is opened under: a resume
    under a hard link's name after a kill would not see the games the killed run stored,
    and play them again. A run refuses a database file with more than one name."""
    here = finished_db.parent
    os.link(finished_db, here / "hard.db")
    done = guti("tournament", *PAIR, "-games", "2", "-db", "hard.db", "-resume", cwd=here)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.strip().endswith("hard.db: the database file has 2 names (hard links);"
                                        " SQLite keeps its log by name, so a tournament is run"
                                        " under one name only: remove the other names")
    assert games_in(finished_db) == 2


def test_a_database_named_like_an_sqlite_uri_is_the_file_of_that_name(tmp_path: Path) -> None:
    """``-db file:t.db``: SQLite may read such a name as a URI (and write ``t.db``); the run,
    its lock and every reader use the file named ``file:t.db``."""
    done = guti("tournament", *PAIR, "-games", "2", "-db", "file:t.db", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "t.db").exists()
    assert games_in(tmp_path / "file:t.db") == 2
    table = guti("standings", "file:t.db", cwd=tmp_path)
    assert table.returncode == 0 and "2 games" in table.stdout, table.stdout + table.stderr


@pytest.mark.signals
def test_sigterm_during_the_resume_of_a_finished_tournament_is_an_interrupt(
        finished_db: Path) -> None:
    """Nothing is left to play, and the run is ended by a signal while it brings its
    outputs in line (here: held on opening a FIFO its ``-pdnout`` names until the test
    reads it): exit 130, as any interrupted run, not 0 as if it had ended by itself."""

    here = finished_db.parent
    os.mkfifo(here / "g.pdn")
    with killed_at_end(subprocess.Popen(
            [*GUTI, "tournament", *PAIR, "-games", "2", "-db", "t.db", "-pdnout",
             "file=g.pdn", "-resume"], cwd=here, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, env=ENV)) as run:
        # the kernel's name for a FIFO's open waiting for the other end
        wait_for(lambda: Path(f"/proc/{run.pid}/wchan").read_text() == "wait_for_partner",
                 "the run held on its -pdnout FIFO", 60)
        run.send_signal(signal.SIGTERM)
        (here / "g.pdn").read_text()  # the other end: the run goes on, and ends
        _out, err = run.communicate(timeout=60)
    assert run.returncode == 130, err
    assert err.endswith("interrupted; continue with the same command and -resume\n"), err
    assert games_in(finished_db) == 2


def test_a_run_output_on_its_own_standard_output_file_is_refused(tmp_path: Path) -> None:
    """``-pdnout file=/dev/stdout`` with the standard output sent to a file: guti's lines
    and the games would overwrite each other there (and the file would be renamed away as
    an older PDN). Refused; through a pipe it is a stream, and works."""
    with open(tmp_path / "out.txt", "w") as out:
        done = subprocess.run([*GUTI, "tournament", *PAIR, "-games", "2", "-db", "t.db",
                               "-pdnout", "file=/dev/stdout"], cwd=tmp_path, stdout=out,
                              stderr=subprocess.PIPE, text=True, timeout=120, env=ENV)
    one_line_exit_2(done, "-pdnout /dev/stdout: is the file guti's standard output goes to")
    assert (tmp_path / "out.txt").read_text() == "" and not (tmp_path / "t.db").exists()
    piped = guti("tournament", *PAIR, "-games", "2", "-db", "t.db", "-pdnout",
                 "file=/dev/stdout", "-quiet", cwd=tmp_path)
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout.count("[Event ") == 2, piped.stdout


def test_a_symlink_or_fifo_where_guti_writes_its_own_side_file_is_refused(
        finished_db: Path) -> None:
    """``FILE.tmp`` (a whole file written, then renamed) and ``FILE.sync`` (the PDN brought
    in line) are guti's own files. A symlink there was written through (a user's file
    emptied, or filled with the export) and a FIFO held the run for ever: each is refused
    in one line before anything is written."""
    here = finished_db.parent
    (here / "precious.txt").write_text("keep\n")
    (here / "e.json.tmp").symlink_to("precious.txt")
    (here / "g.pdn.sync").symlink_to("precious.txt")
    os.mkfifo(here / "r.html.tmp")
    one_line_exit_2(guti("export", "t.db", "-json", "e.json", cwd=here),
                    "e.json.tmp is in the way (a symlink")
    one_line_exit_2(guti("tournament", *PAIR, "-games", "2", "-db", "n.db", "-pdnout",
                         "file=g.pdn", cwd=here), "g.pdn.sync is in the way (a symlink")
    one_line_exit_2(guti("tournament", *PAIR, "-games", "2", "-db", "n.db", "-report",
                         "r.html", cwd=here), "r.html.tmp is in the way (a FIFO")
    assert (here / "precious.txt").read_text() == "keep\n"
    assert (here / "e.json.tmp").is_symlink() and not (here / "n.db").exists()
