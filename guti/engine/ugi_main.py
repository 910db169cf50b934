"""Entry point of the engine program: ``guti engine`` and ``python -m guti.engine``.

Start-up is arranged so that ``ugi`` is answered within a few milliseconds of the
interpreter being up: the front end and the rules core are imported on a background
thread while the first line is read, and a first ``ugi`` is answered from the
option table (:mod:`guti.engine.ugi_options`, which imports nothing heavy) without waiting
for them. Every later line waits for the import and then goes through the normal loop.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading

from .ugi_input import read_line, words

USAGE = """usage: guti engine
Runs the guti reference engine, speaking UGI (protocol.md) on stdin/stdout.
Try: ugi, isready, position startpos, go movetime 1000, d, quit."""


def main(argv: list[str] | None = None) -> int:
    """Run the engine until ``quit`` or end of input, then end the process; returns only
    for ``--help`` or a usage mistake (the exit status)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in ("-h", "-help", "--help", "help"):
        print(USAGE)
        return 0
    if argv:
        print(f"guti engine: unexpected argument {argv[0]!r} (the engine takes none)",
              file=sys.stderr)
        return 2
    # The search thread holds the GIL; a short switch interval lets the input thread read
    # 'stop' and 'isready' within a millisecond or so.
    sys.setswitchinterval(0.001)
    loader = threading.Thread(target=_load_front_end, name="ugi-import", daemon=True)
    loader.start()
    early = []
    first = read_line(sys.stdin.buffer)
    if first.text is None:
        return 0
    if words(first.text) == ["ugi"] and loader.is_alive():
        from .ugi_options import ugi_answer

        sys.stdout.write("".join(text + "\n" for text in ugi_answer()))
        sys.stdout.flush()
    else:
        early.append(first)
    loader.join()
    from .ugi import main_loop

    code = main_loop(early)
    # Ended without Python's finalization: the input thread may still be blocked reading
    # stdin (after a Ctrl-C), and closing stdin under it is a fatal error of the runtime.
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.flush()
    os._exit(code)


def _load_front_end() -> None:
    from . import ugi  # noqa: F401  (imports the rules core too)


if __name__ == "__main__":
    raise SystemExit(main())
