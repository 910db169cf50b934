"""Hostile openings files: control bytes, thousands of bad lines, devices, endless and
huge files.

Skip warnings show control characters escaped and stop after ten, with a summary; a
device that never ends (``/dev/zero``, ``/dev/urandom``) is one line, exit 2; a large
file, or a pipe that never ends, is read only as far as a run needs it (counted in
parses, or shown by a run that finishes while its pipe still has more to give).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from guti.referee.game import openings
from guti.referee.game import random_openings as random_openings_module
from guti.referee.game.openings import (
    CHECKED_WHOLE_BYTES,
    MAX_UNUSABLE_RUN,
    MAX_WARNINGS,
    OpeningsError,
    load_openings,
)
from guti.referee.game.random_openings import random_openings
from guti.rules import Board
from tests.conftest import GUTI, ROOT

FAULTY = str(ROOT / "tests" / "engines" / "faulty.py")
PY = sys.executable
MATCH = ["match", "-engine", f"cmd={PY}", f"args={FAULTY} --seed 1", "name=a",
         "-engine", f"cmd={PY}", f"args={FAULTY} --seed 2", "name=b", "-each", "tc=30+0.5",
         "-games", "2"]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
GAME = "egara-guti"


def guti(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*GUTI, *args], cwd=cwd, env=ENV, capture_output=True, text=True,
                          timeout=300)


def valid_lines(count: int) -> list[str]:
    return [" ".join(o.moves) for o in random_openings(GAME, 4, count, seed=3)]


def test_skip_warnings_show_control_bytes_escaped(tmp_path: Path) -> None:
    book = tmp_path / "book.epd"
    book.write_bytes(b"\x1b[2J\x1b[31m 12-7\nbell\x07 \x1b]0;title\x07\n"
                     + valid_lines(1)[0].encode() + b"\n")
    done = guti(*MATCH, "-openings", f"file={book}", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stderr and "\x07" not in done.stderr
    assert f"{book}:1: skipped opening" in done.stderr and "\\x1b[31m" in done.stderr
    assert f"{book}:2: skipped opening" in done.stderr and "\\x07" in done.stderr


def test_many_bad_lines_give_ten_warnings_and_a_summary(tmp_path: Path) -> None:
    book = tmp_path / "book.epd"
    book.write_text("99-98\n" * 5_275 + valid_lines(1)[0] + "\n")
    said: list[str] = []
    found = load_openings(str(book), GAME, on_error=said.append)
    assert len(found) == 1
    assert len(said) == MAX_WARNINGS + 1
    assert all(f"{book}:{n}: skipped opening" in said[n - 1] for n in range(1, 11))
    assert said[-1] == f"{book}: skipped opening: ... and 5,265 more lines skipped"


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
@pytest.mark.parametrize("spec", ["", "order=random", "format=pdn"])
def test_a_device_that_never_ends_is_one_line(tmp_path: Path, device: str, spec: str) -> None:
    done = guti(*MATCH, "-openings", f"file={device}", *spec.split(), cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "MemoryError" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and device in lines[0], done.stderr
    assert "Game 1/2" not in done.stdout


@contextlib.contextmanager
def endless_fifo(path: Path, chunk: bytes) -> Iterator[threading.Thread]:
    """A FIFO at ``path`` fed ``chunk`` over and over, until its reader closes it; the
    thread that feeds it has ended when the block has (see its ``is_alive``)."""
    os.mkfifo(path)

    def feed_forever() -> None:
        with contextlib.suppress(BrokenPipeError), open(path, "wb") as out:
            while True:
                out.write(chunk)

    feeder = threading.Thread(target=feed_forever, daemon=True)
    feeder.start()
    try:
        yield feeder
    finally:  # let a feeder still waiting for a reader end
        with contextlib.suppress(OSError):
            os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))
        feeder.join(timeout=60)


def test_an_endless_openings_pipe_is_read_only_as_far_as_the_match_needs(
        tmp_path: Path) -> None:
    fifo = tmp_path / "book.epd"
    lines = "".join(f"{line}\n" for line in valid_lines(50)).encode()
    with endless_fifo(fifo, lines) as feeder:
        done = guti(*MATCH, "-openings", f"file={fifo}", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Game 1/2:" in done.stdout and "Game 2/2:" in done.stdout
    assert not feeder.is_alive()


@pytest.mark.parametrize("line", [b"bad\n", b"\n", b"# a comment\n"])
def test_an_endless_pipe_of_unusable_lines_is_one_line(tmp_path: Path, line: bytes) -> None:
    fifo = tmp_path / "book.epd"
    with endless_fifo(fifo, line * 1000) as feeder:
        done = guti(*MATCH, "-openings", f"file={fifo}", cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert f"{fifo}:{MAX_UNUSABLE_RUN}: {MAX_UNUSABLE_RUN:,} lines in a row" in lines[0]
    assert not feeder.is_alive()


def test_a_byte_order_mark_before_the_first_line_is_ignored(tmp_path: Path) -> None:
    book = tmp_path / "book.epd"
    first, second = valid_lines(2)
    book.write_bytes(b"\xef\xbb\xbf" + f"{first}\n{Board(GAME).fen()} moves {second}\n".encode())
    assert [o.moves for o in load_openings(str(book), GAME)] == [
        tuple(first.split()), tuple(second.split())]
    fen_first = tmp_path / "fen.epd"
    fen_first.write_bytes(b"\xef\xbb\xbf" + f"{Board(GAME).fen()}\n".encode())
    assert load_openings(str(fen_first), GAME)[0].fen == Board(GAME).fen()


def test_random_plies_no_game_lasts_are_refused_before_the_count_is_tried(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A million openings of plies no game lasts: the search gives up after its first-tries
    budget (made small here), not after the 50 million tries the count would allow."""
    monkeypatch.setattr(random_openings_module, "_FIRST_TRIES", 200)
    with pytest.raises(OpeningsError, match="cannot make random openings of 5000 plies"):
        random_openings(GAME, 5000, 1_000_000, seed=1)


@pytest.fixture
def counted_parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    parsed: list[str] = []
    real = openings.parse_opening

    def counting(text: str, *args, **kwargs):  # type: ignore[no-untyped-def]
        parsed.append(text)
        return real(text, *args, **kwargs)

    monkeypatch.setattr(openings, "parse_opening", counting)
    return parsed


@pytest.fixture
def large_book(tmp_path: Path) -> tuple[Path, list[str]]:
    """A file of valid openings larger than what is read whole."""
    lines = valid_lines(200)
    book = tmp_path / "large.epd"
    text = "".join(f"{line}\n" for line in lines)
    repeats = CHECKED_WHOLE_BYTES // len(text) + 2
    book.write_text(text * repeats)
    return book, lines


def test_a_large_file_in_order_is_parsed_only_as_far_as_needed(
        large_book: tuple[Path, list[str]], counted_parses: list[str]) -> None:
    book, lines = large_book
    found = load_openings(str(book), GAME, wanted=3)
    assert [" ".join(o.moves) for o in found] == lines[:3]
    assert len(counted_parses) == 3


def test_a_large_file_in_random_order_draws_from_an_index(
        large_book: tuple[Path, list[str]], counted_parses: list[str]) -> None:
    book, lines = large_book
    found = load_openings(str(book), GAME, wanted=5, order="random", seed=11)
    assert len(counted_parses) == 5
    assert all(" ".join(o.moves) in lines for o in found)
    again = load_openings(str(book), GAME, wanted=5, order="random", seed=11)
    assert again == found  # the seed decides
    sources = {o.source for o in found}
    assert len(sources) == 5 and any(int(s.rsplit(":", 1)[1]) > 200 for s in sources)


def test_random_order_on_a_pipe_is_one_line(tmp_path: Path) -> None:
    """``order=random`` reads a large file through an index of offsets, which a pipe cannot
    give: refused in one line instead of holding an endless stream's index."""
    fifo = tmp_path / "book.epd"
    with endless_fifo(fifo, b"12-7\n" * 1000) as feeder:
        done = guti(*MATCH, "-openings", f"file={fifo}", "order=random", cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "not a pipe" in lines[0], done.stderr
    assert not feeder.is_alive()


def test_guti_epd_output_reads_back_as_openings(tmp_path: Path) -> None:
    """``-epdout`` writes a game's last position with EPD operations after it; those lines
    are openings again (the operations ignored), and one naming another game is skipped."""
    played = guti(*MATCH, "-maxmoves", "8", "-epdout", "file=out.epd", cwd=tmp_path)
    assert played.returncode == 0, played.stderr
    lines = (tmp_path / "out.epd").read_text().splitlines()
    assert len(lines) == 2 and all("; variant" in line for line in lines)
    found = load_openings(str(tmp_path / "out.epd"), GAME, None)
    assert [o.fen for o in found] == [line.split(";")[0].strip() for line in lines]
    other = tmp_path / "other.epd"
    other.write_text(lines[0].replace('variant "egara-guti"', 'variant "pretwa"') + "\n"
                     + lines[1] + "\n")
    said: list[str] = []
    assert len(load_openings(str(other), GAME, None, on_error=said.append)) == 1
    assert len(said) == 1 and "an opening of \"pretwa\"" in said[0], said
