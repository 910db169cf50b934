"""The reference engine's search, through the real process: it finds forced wins, sees the
end rules (blocking, the 50-ply clock, repetition from the game history), reports scores
at the right distance, and is reproducible for a given Seed.

Why: these are the search properties a user relies on; each position below is small
enough to be worked out by hand from protocol.md (the reasoning is in the comments), and
every line of play the engine claims is replayed with the rules core.
"""

from __future__ import annotations

from guti.rules import Board
from tests.conftest import ENGINE_ARGV, UgiProgram


def search(eng: UgiProgram, position: str, go: str = "go depth 5") -> tuple[str, list[list[str]]]:
    eng.ask(position)
    eng.send(go)
    lines = eng.read_until("bestmove", timeout=60)
    infos = [line.split() for line in lines if line.startswith("info depth")]
    return lines[-1].split()[1], infos


def score_of(info: list[str]) -> tuple[str, int]:
    at = info.index("score")
    return info[at + 1], int(info[at + 2])


def pv_of(info: list[str]) -> list[str]:
    return info[info.index("pv") + 1:]


def test_finds_the_blocking_win_in_one(engine):
    # Black's only piece is on 1 (neighbours 2 and 6). White holds 2, 3 and 9, so once 6 is
    # filled Black can neither step nor jump (1x3 over 2 and 1x9 over 6 land on White):
    # 7-6 wins at once (end rule 2). 2-6 and 9-6 would open 2 or 9 again.
    move, infos = search(engine, "position fen bww2/1w1/w2/1/3/3/5 w 0 1")
    assert move == "7-6"
    assert score_of(infos[-1]) == ("win", 1)


def test_finds_the_forced_win_in_three(engine):
    # Black on 1 can only step to 6 (2 and the jump to 3 are blocked); then 2x16 or 9x1
    # takes its last piece. Any White move that keeps 2, 3 and 9 in place wins in 3 plies.
    fen = "bww2/3/ww1/1/3/3/5 w 0 1"
    move, infos = search(engine, f"position fen {fen}")
    assert score_of(infos[-1]) == ("win", 3)
    board = Board.from_fen("egara-guti", fen)
    for text in pv_of(infos[-1])[:3]:
        board.push_str(text)
    assert board.outcome() is not None and board.outcome().winner == "w"
    assert pv_of(infos[-1])[0] == move


def test_reports_the_loss_at_its_distance(engine):
    # Same position with Black to move: 1-6 is forced, then White captures the last piece.
    move, infos = search(engine, "position fen bww2/3/ww1/1/3/3/5 b 0 1")
    assert move == "1-6"
    assert score_of(infos[-1]) == ("loss", 2)


def test_does_not_hang_its_last_piece(engine):
    # White 12, Black 7: 12-10 lets 7x12 take White's only piece; 12-9, 12-11 and the steps
    # down are safe.
    move, infos = search(engine, "position fen 5/1b1/3/w/3/3/5 w 0 1")
    assert move != "12-10"
    assert score_of(infos[-1])[0] != "loss"


def test_plays_the_compulsory_capture(engine):
    # After 13-12 Black must capture; only 11 can (9x15 and 10x14 land on White): 11x13.
    move, _ = search(engine, "position startpos moves 13-12", "go depth 3")
    assert move == "11x13"


def test_fifty_ply_clock_in_search(engine):
    # Clock 48: after White's move and Black's reply the clock reaches 50 and the side with
    # more pieces wins. Black (on 5) cannot reach a capture in one move.
    _, infos = search(engine, "position fen 4b/3/3/1/3/3/ww3 w 48 30", "go depth 4")
    assert score_of(infos[-1]) == ("win", 2)
    _, infos = search(engine, "position fen 4w/3/3/1/3/3/bb3 w 48 30", "go depth 4")
    assert score_of(infos[-1]) == ("loss", 2)


def test_repetition_from_the_game_history(engine):
    # After 7 plies of shuffling the position after Black's 4-5 would occur for the third
    # time (the FEN counts as the first): the game would end, White winning 2 to 1.
    # Black has 4-3 and 4-8 and must avoid 4-5.
    history = "19-16 5-4 16-19 4-5 19-16 5-4 16-19"
    move, infos = search(engine, f"position fen 4b/3/3/1/3/3/ww3 w 0 1 moves {history}")
    assert move in ("4-3", "4-8")
    assert score_of(infos[-1]) != ("loss", 1)


def test_pretwa_three_or_fewer_in_search(engine):
    # Pretwa, 4 against 4, White to move: White on 2 jumps Black's 3 to 4, so Black drops to
    # three pieces and loses at once (end rule 1): a win in 1.
    engine.ask("setoption name UGI_Variant value pretwa")
    engine.ask("uginewgame")
    fen = "1/wb4/6/bbwwwb w 0 1"
    board = Board.from_fen("pretwa", fen)
    assert all(m.is_capture for m in board.legal_moves)
    move, infos = search(engine, f"position fen {fen}", "go depth 3")
    assert score_of(infos[-1]) == ("win", 1)
    board.push_str(move)
    assert board.outcome().reason == "three or fewer" and board.outcome().winner == "w"


# --- reproducibility and levels ---------------------------------------------------------------


POSITIONS = [
    ("egara-guti", "position startpos"),
    ("egara-guti", "position startpos moves 14-12 10x14 17x12 7-10"),
    ("pretwa", "position startpos moves 5-1 2x5"),
    ("pretwa", "position startpos"),
]


def run_session(options: dict[str, str], positions, go: str) -> list[tuple[str, list[str]]]:
    """A fresh engine with ``options``: (bestmove, info lines without time/nps) per position."""
    eng = UgiProgram(ENGINE_ARGV)
    try:
        eng.handshake()
        for name, value in options.items():
            assert eng.ask(f"setoption name {name} value {value}") == []
        out = []
        for game, position in positions:
            eng.ask(f"setoption name UGI_Variant value {game}")
            eng.ask("uginewgame")
            move, infos = search(eng, position, go)
            stable = []
            for words in infos:
                kept = []
                skip = False
                for word in words:
                    if skip:
                        skip = False
                        continue
                    if word in ("time", "nps"):
                        skip = True
                        continue
                    kept.append(word)
                stable.append(" ".join(kept))
            out.append((move, stable))
        return out
    finally:
        eng.close()


def test_seed_makes_fixed_depth_search_reproducible():
    first = run_session({"Seed": "7"}, POSITIONS, "go depth 5")
    second = run_session({"Seed": "7"}, POSITIONS, "go depth 5")
    assert first == second
    assert all(infos for _, infos in first)


def test_weak_level_is_legal_reproducible_and_seed_dependent():
    positions = []
    for game in ("egara-guti", "pretwa"):
        for plies in range(0, 12, 2):
            board = Board(game)
            moves = []
            for _ in range(plies):
                if board.is_game_over():
                    break
                move = sorted(board.legal_moves, key=str)[len(moves) % len(board.legal_moves)]
                board.push(move)
                moves.append(str(move))
            if not board.is_game_over():
                positions.append((game, " ".join(["position startpos", "moves", *moves])
                                  if moves else "position startpos"))
    a = run_session({"Level": "0", "Seed": "1"}, positions, "go depth 3")
    b = run_session({"Level": "0", "Seed": "1"}, positions, "go depth 3")
    c = run_session({"Level": "0", "Seed": "2"}, positions, "go depth 3")
    assert [m for m, _ in a] == [m for m, _ in b]
    assert [m for m, _ in a] != [m for m, _ in c]
    for (game, position), (move, infos) in zip(positions, a, strict=True):
        board = Board(game)
        for text in position.split()[3:]:
            board.push_str(text)
        assert move in {str(m) for m in board.legal_moves}
        assert all(int(words.split()[2]) <= 1 for words in infos)  # level 0 searches 1 ply
