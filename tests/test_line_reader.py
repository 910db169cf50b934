"""The line reader on its own, without processes: lines, arrival stamps, bounds."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from guti.referee.process import line_reader
from guti.referee.process.line_reader import LINE_LIMIT, QUEUE_LIMIT, LineReader


def fed(*chunks: bytes) -> LineReader:
    reader = LineReader()
    for at, chunk in enumerate(chunks):
        reader.feed(chunk, float(at))
    return reader


def read_all(reader: LineReader) -> list[tuple[str, float]]:
    out = []
    while (found := reader.take_through(None, 1)) is not None:
        out.append((found[0][-1], found[1]))
    return out


def test_a_line_arrives_with_the_chunk_that_held_its_newline() -> None:
    reader = fed(b"info dep", b"th 1\nbest", b"move 1-2\n")
    assert read_all(reader) == [("info depth 1", 1.0), ("bestmove 1-2", 2.0)]


def test_an_unfinished_line_is_not_a_line_until_the_stream_ends() -> None:
    reader = fed(b"a\nb")
    assert read_all(reader) == [("a", 0.0)]
    reader.close(7.0)
    assert read_all(reader) == [("b", 7.0)]
    assert reader.closed


def test_the_unfinished_line_is_told_from_its_start_until_it_ends() -> None:
    reader = fed(b"info depth 1\nbestmove 1", b"6-12\r")
    assert reader.unfinished(60) == b"bestmove 16-12\r"
    assert reader.unfinished(4) == b"best"
    read_all(reader)
    assert reader.unfinished(60) == b"bestmove 16-12\r"  # reading lines leaves it
    reader.feed(b"\n", 2.0)
    assert reader.unfinished(60) == b""


def test_lines_lose_their_cr_and_bad_bytes_are_replaced() -> None:
    reader = fed(b"one\r\n\xff two\r\n")
    assert read_all(reader) == [("one", 0.0), ("\ufffd two", 0.0)]


def test_reading_through_a_word_keeps_the_last_lines() -> None:
    reader = fed(b"info a\ninfo b\ninfo string bestmove 9-9\n  bestmove\t13-12  \r\nnext\n")
    lines, at = reader.take_through(b"bestmove", 2) or ([], -1.0)
    assert lines == ["info string bestmove 9-9", "  bestmove\t13-12  "]
    assert at == 0.0
    assert read_all(reader) == [("next", 0.0)]


def test_a_word_must_be_the_whole_first_word() -> None:
    reader = fed(b"bestmoves 1-2\ninfo bestmove 1-2\n")
    assert reader.take_through(b"bestmove", 5) is None
    reader.feed(b"bestmove\n", 1.0)
    assert reader.take_through(b"bestmove", 5) == (
        ["bestmoves 1-2", "info bestmove 1-2", "bestmove"], 1.0)


def test_a_search_resumes_after_the_lines_it_already_searched() -> None:
    reader = fed(b"info 1\n" * 1000)
    assert reader.find_line(b"bestmove") is None
    assert reader.scanned == reader.line_start  # not searched again next time
    reader.feed(b"bestmove 1-2\n", 1.0)
    assert reader.completed_contains(b"bestmove")
    lines, at = reader.take_through(b"bestmove", 1) or ([], -1.0)
    assert (lines, at) == (["bestmove 1-2"], 1.0)


def test_completed_contains_looks_only_at_the_lines_just_completed() -> None:
    reader = fed(b"bestmove 1-2\n")
    reader.feed(b"info 2\n", 1.0)
    assert not reader.completed_contains(b"bestmove")
    reader.feed(b"bestm", 2.0)  # completes no line
    assert not reader.completed_contains(b"bestmove")
    reader.feed(b"ove 3-4\n", 3.0)  # the word straddles two chunks
    assert reader.completed_contains(b"bestmove")


def test_drop_forgets_complete_lines_but_not_the_unfinished_one() -> None:
    reader = fed(b"stale 1\nstale 2\nfre")
    reader.drop()
    reader.feed(b"sh\n", 1.0)
    assert read_all(reader) == [("fresh", 1.0)]


def test_take_all_consumes_what_is_complete() -> None:
    reader = fed(b"a\nb\nc\nd")
    assert reader.take_all(2) == ["b", "c"]
    assert reader.take_all(2) == []


def test_a_line_of_exactly_the_limit_is_accepted() -> None:
    reader = fed(b"x" * LINE_LIMIT + b"\n")
    assert reader.error is None
    assert read_all(reader) == [("x" * LINE_LIMIT, 0.0)]


@pytest.mark.parametrize("chunks", [
    [b"x" * (LINE_LIMIT + 1) + b"\n"],  # in one chunk
    [b"a\n" + b"x" * (LINE_LIMIT + 1) + b"\nb\n"],  # between others in one chunk
    [b"x" * LINE_LIMIT, b"x\n"],  # completed by a later chunk
    [b"x" * 1000] * (LINE_LIMIT // 1000 + 1),  # never finished
    [b"a\n" + b"x" * (LINE_LIMIT + 1)],  # left unfinished after a line
], ids=["one chunk", "among lines", "completed later", "unfinished", "tail"])
def test_an_over_long_line_is_an_error_and_is_never_kept(chunks: list[bytes]) -> None:
    reader = fed(*chunks)
    assert reader.error == f"sent a line longer than {LINE_LIMIT} bytes"
    assert len(reader.buf) < 16  # the long line was not kept
    assert not reader.feed(b"more\n", 9.0)  # nothing more is taken


def test_unread_output_over_the_budget_is_an_error() -> None:
    chunk = b"x\n" * 32768
    reader = LineReader()
    for at in range(QUEUE_LIMIT // len(chunk) + 1):
        reader.feed(chunk, float(at))
    assert reader.error == f"left more than {QUEUE_LIMIT} bytes of output unread"


def test_each_arrival_stamp_counts_against_the_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """A flood of short lines, one per chunk, is bounded by its stamps, not only its bytes;
    one of empty lines (which are folded, as ``info`` lines are) stays within it."""
    monkeypatch.setattr(line_reader, "QUEUE_LIMIT", 1000)
    reader = LineReader()
    at = 0
    while reader.error is None:
        reader.feed(b"x\n", float(at))
        at += 1
    assert at == 1000 // (2 + line_reader.STAMP_COST) + 1
    empty = LineReader()
    for at in range(10_000):
        empty.feed(b"\n", float(at))
        assert empty.error is None and empty.unread_cost() <= 1000


def test_read_output_is_freed_so_memory_stays_bounded() -> None:
    """Megabytes fed and read as they come: the reader holds only a little of them."""
    reader = LineReader()
    for at in range(20_000):
        reader.feed(b"info depth %d nodes 12345 pv 1-2 3-4\nbestmove 1-2\n" % at, float(at))
        assert reader.take_through(b"bestmove", 3) is not None
        assert len(reader.buf) <= 2 * line_reader.COMPACT_BYTES
        assert len(reader.ends) <= 2 * line_reader.COMPACT_STAMPS + 2
    assert reader.error is None


@given(st.lists(st.text(st.characters(blacklist_characters="\n\r", blacklist_categories=["Cs"]),
                        max_size=20), max_size=30),
       st.lists(st.integers(1, 50), min_size=1, max_size=20))
def test_any_chunking_reads_the_same_lines(lines: list[str], cuts: list[int]) -> None:
    """However the bytes are cut into chunks, and whenever they are read, the same lines
    come out, each stamped with the chunk that held its newline."""
    data = "".join(f"{line}\n" for line in lines).encode()
    newline_chunk: list[float] = []
    reader, start, i = LineReader(), 0, 0
    got: list[tuple[str, float]] = []
    while start < len(data):
        chunk = data[start : start + cuts[i % len(cuts)]]
        reader.feed(chunk, float(i))
        newline_chunk += [float(i)] * chunk.count(b"\n")
        start, i = start + len(chunk), i + 1
        if i % 3 == 0:  # read some of it now and then, as a referee does
            got += read_all(reader)
    reader.close(float(i))
    got += read_all(reader)
    assert got == list(zip(lines, newline_chunk, strict=True))


def test_a_whole_reply_is_one_line_opening_with_the_word_and_nothing_unread() -> None:
    reader = LineReader()
    assert reader.is_whole_reply(b"bestmove 1-2\n", b"bestmove")
    assert reader.is_whole_reply(b"bestmove\r\n", b"bestmove")
    assert not reader.is_whole_reply(b"bestmoves 1-2\n", b"bestmove")
    assert not reader.is_whole_reply(b"info 1\nbestmove 1-2\n", b"bestmove")
    assert not reader.is_whole_reply(b"bestmove 1-2", b"bestmove")  # unfinished
    assert not reader.is_whole_reply(b"bestmove", b"bestmove")  # the word alone, so far
    reader.feed(b"info", 0.0)  # something unread (an unfinished line) comes first
    assert not reader.is_whole_reply(b"bestmove 1-2\n", b"bestmove")


def test_a_handed_over_reply_leaves_nothing_held_and_the_next_lines_read_on() -> None:
    reader = fed(b"info 1\n")
    assert read_all(reader) == [("info 1", 0.0)]
    reader.hand_over(b"bestmove 1-2\n")
    assert (len(reader.buf), len(reader.ends)) == (0, 0)
    reader.feed(b"info 2\n", 5.0)
    assert read_all(reader) == [("info 2", 5.0)]


def test_a_reply_given_back_is_read_first_with_its_arrival() -> None:
    """Its reader was cancelled before taking it; lines fed since come after it."""
    reader = fed(b"info 1\n")
    read_all(reader)
    assert reader.find_line(b"bestmove") is None
    reader.hand_over(b"bestmove 1-2\n")
    reader.feed(b"info 2\nbest", 5.0)
    assert reader.find_line(b"bestmove") is None  # searched past where it goes back
    reader.give_back(b"bestmove 1-2\n", 4.0)
    assert reader.take_through(b"bestmove", 3) == (["bestmove 1-2"], 4.0)
    reader.feed(b"move 3-4\n", 6.0)
    assert reader.take_through(b"bestmove", 3) == (["info 2", "bestmove 3-4"], 6.0)


def test_completed_text_is_what_the_last_chunk_completed() -> None:
    reader = fed(b"a\r\nb")
    assert reader.completed_text() == "a"
    reader.feed(b"c", 1.0)
    assert reader.completed_text() is None
    reader.feed(b"\n\n", 2.0)
    assert reader.completed_text() == "bc\n"
    reader.close(3.0)
    assert reader.completed_text() is None


def test_unread_info_lines_over_the_budget_are_folded_not_a_fault(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A chatty engine: the oldest unread ``info`` lines are dropped to stay within the
    budget; the latest ones and the ``bestmove`` after them are read as sent."""
    monkeypatch.setattr(line_reader, "QUEUE_LIMIT", 10_000)
    reader = LineReader()
    for i in range(2000):
        reader.feed(f"info depth {i} nodes {i * 100}\n".encode(), float(i))
        assert reader.unread_cost() <= 10_000
    reader.feed(b"bestmove 13-12\n", 2000.0)
    assert reader.error is None and reader.folded > 0
    lines, at = reader.take_through(b"bestmove", 3) or ([], 0.0)
    assert lines == ["info depth 1998 nodes 199800", "info depth 1999 nodes 199900",
                     "bestmove 13-12"]
    assert at == 2000.0


def test_empty_lines_among_unread_info_lines_are_folded_with_them(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """protocol.md 5.1: empty lines are ignored, so an engine's blank line does not turn
    its ``info`` flood into a fault."""
    monkeypatch.setattr(line_reader, "QUEUE_LIMIT", 10_000)
    reader = LineReader()
    reader.feed(b"\n\r\n", 0.0)
    for i in range(2000):
        reader.feed(b"info depth 1\n\n" if i % 7 else b"info depth 1\n", float(i + 1))
    assert reader.error is None and reader.folded > 0
    assert reader.unread_cost() <= 10_000


def test_unread_lines_other_than_info_over_the_budget_are_still_a_fault(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(line_reader, "QUEUE_LIMIT", 10_000)
    reader = LineReader()
    reader.feed(b"debug: hello\n", 0.0)  # one line that is not info, oldest of all
    at = 1
    while reader.error is None:
        reader.feed(b"info depth 1\n", float(at))
        at += 1
    assert reader.error == "left more than 10000 bytes of output unread"
