"""Machine instructions guti's own process executes per ply and per game: a count, not a time.

Why: on this 2-core virtual machine the CPU time of one run moves by 10-25 % from one
minute to the next (the host takes its share), so a change worth a few percent cannot be
seen in ``referee_cpu.py``; and in the compiled build most of a ply is C, which
``referee_opcodes.py`` (Python bytecodes) does not see. valgrind's callgrind counts every
instruction guti's process executes in user space, compiled or interpreted (the engines are
processes of their own, not traced): the same in every run to a fraction of a percent (how
many turns the event loop takes depends a little on timing). Counted: a tournament in
this process (``-concurrency 1``, no pinning, two instant-reply C bots, every game from the
start position), after 4 games not counted apart; from two runs of ``--games`` and
``--games // 6`` games, what each further game adds, divided by its plies (whole games:
"per ply", the game's own cost shared in), and the same with every game ended after its
first move by ``-maxmoves 1`` ("per game": a game's own cost, its two plies included).
Needs ``valgrind`` (Debian: ``apt-get install valgrind``); about two minutes a build.

    python benchmarks/referee_instructions.py [--games 60] [--compiled]
                                              [--baseline COMMIT [--baseline-compiled]]

``--compiled`` counts this checkout's compiled build (``GUTI_COMPILE=1``, built into a
temporary copy); ``--baseline COMMIT`` counts COMMIT too, in the same run (its Python, or
with ``--baseline-compiled`` its compiled build).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def child(code: str, bot: str, folder: str, games: int, maxmoves: int) -> None:
    """Under valgrind: the warm-up and the counted tournament; prints its plies."""
    import referee_cpu

    referee_cpu.CODE = code
    sys.path.insert(0, code)
    flags = ("-maxmoves", str(maxmoves)) if maxmoves else ()
    referee_cpu.run_tournament(folder, bot, 4, 1, openings=False, flags=flags)
    run = referee_cpu.run_tournament(folder, bot, games, 1, openings=False, flags=flags)
    print(f"plies {int(run['plies'])}")


def instructions(code: str, bot: str, folder: str, games: int, maxmoves: int) -> tuple[int, int]:
    """(instructions, plies) of one counted run of ``games`` games."""
    out = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
         os.path.abspath(__file__), "--child", code, bot, folder, str(games), str(maxmoves)],
        capture_output=True, text=True, check=True)
    total = re.search(r"Collected : (\d+)", out.stderr)
    plies = re.search(r"plies (\d+)", out.stdout)
    if total is None or plies is None:
        raise SystemExit(f"valgrind run failed:\n{out.stderr[-2000:]}")
    return int(total.group(1)), int(plies.group(1))


def measure(games: int, compiled: bool) -> dict[str, float]:
    import referee_cpu

    with tempfile.TemporaryDirectory() as folder:
        code = ROOT
        if compiled:
            sys.path.insert(0, os.path.join(ROOT, "build_support"))
            from guti_build import compile_copy

            code = compile_copy(ROOT, os.path.join(folder, "compiled"))
        bot = referee_cpu.build_bot(folder)
        few = max(2, games // 6)
        (i_many, p_many), (i_few, p_few) = (instructions(code, bot, folder, n, 0)
                                            for n in (games, few))
        (g_many, _), (g_few, _) = (instructions(code, bot, folder, n, 1) for n in (games, few))
    return {"per_ply": (i_many - i_few) / (p_many - p_few),
            "per_game": (g_many - g_few) / (games - few),
            "plies_per_game": (p_many - p_few) / (games - few)}


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        code, bot, folder, games, maxmoves = sys.argv[2:7]
        child(code, bot, folder, int(games), int(maxmoves))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=60)
    parser.add_argument("--compiled", action="store_true")
    parser.add_argument("--baseline", metavar="COMMIT")
    parser.add_argument("--baseline-compiled", action="store_true")
    parser.add_argument("--json", action="store_true", help="one JSON line of figures")
    args = parser.parse_args()
    now = measure(args.games, args.compiled)
    if args.json:
        print(json.dumps(now))
        return 0
    rows = [("instructions per ply (whole games; the game's own cost shared in)", "per_ply"),
            ("instructions per game (games ended after one move, by -maxmoves 1)", "per_game"),
            ("plies per whole game", "plies_per_game")]
    now_name = "this checkout" + (", compiled" if args.compiled else "")
    if not args.baseline:
        print(f"| | {now_name} |\n|---|---|")
        for label, key in rows:
            print(f"| {label} | {now[key]:,.0f} |" if key != "plies_per_game"
                  else f"| {label} | {now[key]:.1f} |")
        return 0
    from baseline import json_at

    base = json_at(args.baseline, __file__,
                   ["--games", str(args.games), *(["--compiled"] if args.baseline_compiled else [])])
    base_name = args.baseline + (", compiled" if args.baseline_compiled else "")
    print(f"| | {base_name} | {now_name} | change |\n|---|---|---|---|")
    for label, key in rows:
        if key == "plies_per_game":
            print(f"| {label} | {base[key]:.1f} | {now[key]:.1f} | |")
        else:
            print(f"| {label} | {base[key]:,.0f} | {now[key]:,.0f} | "
                  f"{100 * (now[key] - base[key]) / base[key]:+.1f} % |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
