"""What it costs guti to learn that a quit engine's process group is gone.

Why: when an engine quits, guti makes sure nothing of its process group is left (a
grandchild it forked, a zombie to reap): ``guti.referee.process.group.group_members`` answers
three times per quit. It used to read every process's ``/proc/PID/stat`` each time, which
takes milliseconds on a machine with a few dozen processes (more on a busy one); now a
``killpg(pgid, 0)`` that finds no process at all answers at once. That is paid at the end
of every run, and per game with ``restart=on`` (each engine quit after each game).

    python benchmarks/group_scan.py [--baseline COMMIT] [--repeat 100] [--json]

Times ``group_members`` of a group whose only process has exited and been reaped; with
``--baseline``, this same script at COMMIT too (benchmarks/baseline.py), in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import timeit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def measure(repeat: int) -> dict[str, float]:
    """Microseconds per ``group_members`` call on a gone group (median of 5 timings), and
    how many processes the machine has (what the scan reads)."""
    from guti.referee.process.group import group_members

    gone = subprocess.Popen([sys.executable, "-c", "pass"], start_new_session=True)
    gone.wait()  # exited and reaped: nothing of its group is left
    times = timeit.repeat(lambda: group_members(gone.pid), number=repeat, repeat=5)
    return {"us_per_call": 1e6 * sorted(times)[2] / repeat,
            "processes": float(sum(entry.isdigit() for entry in os.listdir("/proc")))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", help="a commit to measure as well, in the same run")
    parser.add_argument("--repeat", type=int, default=100)
    parser.add_argument("--json", action="store_true", help="one JSON line of the figures")
    args = parser.parse_args()
    rows = []
    if args.baseline:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from baseline import json_at

        rows.append((args.baseline, json_at(args.baseline, __file__, ["--repeat", str(args.repeat)])))
    now = measure(args.repeat)
    if args.json:
        print(json.dumps(now))
        return 0
    rows.append(("this checkout", now))
    print(f"{now['processes']:.0f} processes on this machine; median of 5 timings of "
          f"{args.repeat} calls")
    print("| | `group_members` of a group that is gone |\n|---|---|")
    for label, figures in rows:
        print(f"| {label} | {figures['us_per_call']:.1f} us |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
