"""CPU that short ``guti`` commands spend, mostly loading their modules.

Each command runs in a fresh interpreter, with the modules' compiled bytecode cached as
an installed package has it; the figure is the median CPU time (user + system) of the
process, over ``--repeat`` runs. With ``--baseline COMMIT`` the same commands run from
that commit's tree too, alternating with this checkout's, so that both are measured in
the same minutes of a shared machine.

    python benchmarks/command_start.py [--repeat 15] [--baseline COMMIT]

The commands: a usage mistake given to ``match`` and to ``tournament`` (an impossible
time control: the whole settings model is read before it is refused), ``standings`` and
``export -json`` of a small tournament's database, and ``match --help``.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile

from source_trees import ROOT, extract, uptime

ENGINE = os.path.join(ROOT, "tests", "engines", "faulty.py")
PAIR = ["-engine", f"cmd={sys.executable}", f"args={ENGINE}", "name=A",
        "-engine", f"cmd={sys.executable}", f"args={ENGINE}", "name=B"]
COMMANDS: dict[str, list[str]] = {
    "match, usage mistake": ["match", *PAIR, "-each", "tc=-1"],
    "tournament, usage mistake": ["tournament", *PAIR, "-each", "tc=-1"],
    "standings DB": ["standings", "t.db"],
    "export DB -json": ["export", "t.db", "-json", os.devnull],
    "match --help": ["match", "--help"],
}
RUN = "import sys; from guti.cli import main; sys.exit(main())"


def cpu_ms(tree: str, argv: list[str], folder: str, env: dict[str, str]) -> float:
    """CPU milliseconds of one ``guti ARGV`` run from ``tree``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", RUN, *argv], cwd=folder, stdin=subprocess.DEVNULL,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env={**env, "PYTHONPATH": tree})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return 1000 * (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--baseline", help="a commit to measure alongside this checkout")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        trees = {"this checkout": ROOT}
        if args.baseline:
            trees[args.baseline] = os.path.join(folder, "baseline")
            extract(args.baseline, trees[args.baseline])
        env = dict(os.environ, PYTHONPYCACHEPREFIX=os.path.join(folder, "pycache"))
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        subprocess.run([sys.executable, "-c", RUN, "tournament", *PAIR, "-each", "tc=10",
                        "-games", "2", "-db", "t.db"], cwd=folder, check=True,
                       stdout=subprocess.DEVNULL, env={**env, "PYTHONPATH": ROOT})
        times: dict[tuple[str, str], list[float]] = {}
        for run in range(args.repeat + 1):  # the first run fills the bytecode cache
            for name, argv in COMMANDS.items():
                for label, tree in trees.items():
                    ms = cpu_ms(tree, argv, folder, env)
                    if run:
                        times.setdefault((name, label), []).append(ms)
    print(uptime())
    print("| command | " + " | ".join(trees) + " |")
    print("|---|" + "---|" * len(trees))
    for name in COMMANDS:
        cells = [f"{statistics.median(times[(name, label)]):.0f} ms" for label in trees]
        print(f"| `{name}` | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
