"""``guti bench`` (and the engine command ``bench``): a fixed search workload.

Searches a fixed set of positions of every game to a fixed depth, each with a fresh
table and the default options, and prints the nodes of each and the total with the speed.
The node count depends only on the search code (no clock is involved), so it is a
signature of the search: a change that alters it changes the search, one that does not
is a pure speed change.

Usage: ``guti bench [DEPTH]`` (default 8). The last line is ``nodes N nps M time T``.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable

DEFAULT_DEPTH = 8

#: (game, FEN): every start, and middle-game positions reached by random play (seed 7, after
#: 4, 10 and 16 plies for the cousins). The first eight, the two first games', are the
#: original workload, so their node counts compare with earlier runs.
POSITIONS: tuple[tuple[str, str], ...] = (
    ("egara-guti", "bbbbb/bbb/bbb/1/www/www/wwwww w 0 1"),
    ("egara-guti", "bbbbb/bbb/bb1/1/bww/www/wwwww w 0 2"),
    ("egara-guti", "bb1bb/3/1b1/w/1ww/ww1/wwww1 b 1 5"),
    ("egara-guti", "1b1bb/2b/1w1/1/2w/1ww/w2ww b 0 8"),
    ("pretwa", "1/bbwwwb/bbwwwb/bbwwwb w 0 1"),
    ("pretwa", "w/1bw1wb/bbw1wb/bbwwwb b 0 2"),
    ("pretwa", "1/2ww1b/bb1ww1/bbwww1 w 0 5"),
    ("pretwa", "b/5b/1b1w2/bbwww1 w 0 6"),
    ("lau-kata-kati", "bbb/bbb/bbb/1/www/www/www w 0 1"),
    ("lau-kata-kati", "bbb/bbb/bb1/w/w1w/w1w/www w 1 3"),
    ("lau-kata-kati", "bbb/bb1/1bw/b/1ww/www/w1w w 1 6"),
    ("lau-kata-kati", "bb1/b1b/w2/b/1ww/1ww/w1w w 0 9"),
    ("dash-guti", "bbb/bbb/bbb/w1b/www/www/www w 0 1"),
    ("dash-guti", "bbb/bbb/bb1/wwb/w1w/w1w/www w 1 3"),
    ("dash-guti", "bbb/bb1/3/2w/w2/wbw/www w 0 6"),
    ("dash-guti", "b1b/2b/w2/2w/ww1/2w/w1w w 3 9"),
    ("gol-skuish", "1/bbwwwb/bbwwwb/bbwwwb/bbwwwb/bbwwwb/bbwwwb/bbwwwb w 0 1"),
    ("gol-skuish", "1/1b1bw1/bbwwwb/bbwwwb/bbwwwb/bbwwwb/bbwwwb/bbwwwb w 0 3"),
    ("gol-skuish", "1/3ww1/3b1w/b2bwb/bbwwwb/bbwwwb/bbwwwb/bbwwwb w 0 6"),
    ("gol-skuish", "1/6/bb4/b4b/bbw3/bbwwwb/bbwwwb/bbwwwb w 0 9"),
    ("alquerque", "bbbbb/bbbbb/bb1ww/wwwww/wwwww w 0 1"),
    ("alquerque", "bbbbb/bb1bb/1bwww/w2ww/wwbww w 0 3"),
    ("alquerque", "bbbbb/bb3/w4/www1b/ww1ww w 0 6"),
    ("alquerque", "bb2b/b4/w2bw/w4/ww1w1 w 0 9"),
    ("butterfly", "bbb/bbb/bbb/1/www/www/www w 0 1"),  # Lau kata kati's board under another name
)


def run_bench(emit: Callable[[str], None], depth: int = DEFAULT_DEPTH,
              stop: threading.Event | None = None) -> tuple[int, float]:
    """Search every position to ``depth``; ``emit`` each result line. Returns (nodes, seconds)."""
    from guti.engine.search import Searcher, SearchLimits, describe_score
    from guti.rules import Board

    total = 0
    elapsed = 0.0
    for number, (game, fen) in enumerate(POSITIONS, start=1):
        if stop is not None and stop.is_set():
            emit("bench stopped")
            break
        searcher = Searcher(hash_mb=16, seed=0, level=20)
        board = Board.from_fen(game, fen)
        began = time.perf_counter()
        result = searcher.search(board, SearchLimits(depth=depth), None, stop)
        took = time.perf_counter() - began
        total += result.nodes
        elapsed += took
        score = describe_score(result.score if result.score is not None else 0)
        emit(f"position {number} {game} {fen}: bestmove {result.bestmove} "
             f"score {score.kind} {score.value} nodes {result.nodes}")
    emit(f"nodes {total} nps {int(total / elapsed) if elapsed else 0} time {int(elapsed * 1000)}")
    return total, elapsed


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``guti bench``; exit status 2 for a bad argument."""
    argv = list(sys.argv[1:] if argv is None else argv)
    depth = DEFAULT_DEPTH
    if argv:
        if argv[0] in ("-h", "-help", "--help"):
            print("usage: guti bench [DEPTH]\n"
                  f"Searches a fixed set of positions of every game to DEPTH (1..30, default "
                  f"{DEFAULT_DEPTH}).\nThe last line is 'nodes N nps M time T'; N is a "
                  "signature of the search.")
            return 0
        if len(argv) > 1 or argv[0] not in {str(d) for d in range(1, 31)}:
            print(f"guti bench: expected one depth 1..30, got {' '.join(argv)!r}", file=sys.stderr)
            return 2
        depth = int(argv[0])
    run_bench(lambda text: print(text, flush=True), depth)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
