"""What it costs guti to learn that a quit engine's process group is gone.

Why: when an engine quits, guti makes sure nothing of its process group is left (a
grandchild it forked, a zombie to reap): ``referee.process.group.group_members`` answers
three times per quit. It used to read every process's ``/proc/PID/stat`` each time, which
takes milliseconds on a machine with a few dozen processes (more on a busy one); now a
``killpg(pgid, 0)`` that finds no process at all answers at once. That is paid at the end
of every run, and per game with ``restart=on`` (each engine quit after each game).

    python benchmarks/group_scan.py [--baseline COMMIT] [--repeat 100]

Times ``group_members`` of a group whose only process has exited and been reaped, in this
checkout and (``--baseline``) in COMMIT's ``referee/process/group.py``, in this process.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import timeit
from types import ModuleType

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GROUP = "referee/process/group.py"


def load(path: str, name: str) -> ModuleType:
    """``path`` as a module of its own (so two versions can be timed side by side)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", help="a commit whose group.py to time as well")
    parser.add_argument("--repeat", type=int, default=100)
    args = parser.parse_args()
    versions = [("this checkout", load(os.path.join(ROOT, GROUP), "group_now"))]
    with tempfile.TemporaryDirectory() as folder:
        if args.baseline:
            old = os.path.join(folder, "group_old.py")
            with open(old, "w") as fh:
                subprocess.run(["git", "-C", ROOT, "show", f"{args.baseline}:{GROUP}"],
                               stdout=fh, check=True)
            versions.insert(0, (args.baseline, load(old, "group_old")))
        gone = subprocess.Popen([sys.executable, "-c", "pass"], start_new_session=True)
        gone.wait()  # exited and reaped: nothing of its group is left
        processes = sum(entry.isdigit() for entry in os.listdir("/proc"))
        print(f"{processes} processes on this machine; microseconds per call, median of 5 "
              f"timings of {args.repeat} calls")
        for label, module in versions:
            times = timeit.repeat(lambda m=module: m.group_members(gone.pid),
                                  number=args.repeat, repeat=5)
            per_call = sorted(times)[2] / args.repeat
            print(f"| {label} | group_members of a group that is gone: {per_call * 1e6:.1f} us |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
