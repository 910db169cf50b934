"""The event loop the referee runs on: uvloop when it is installed, else asyncio's own.

uvloop (the optional extra ``fast``: ``pip install 'guti[fast]'``) runs the same
coroutines with less CPU per event, which with instant-reply engines is most of the
referee's time per ply. Behaviour is the same either way: every time the referee
measures comes from ``time.monotonic()``, never from the loop's clock.
``GUTI_EVENT_LOOP=asyncio`` chooses asyncio's loop even when uvloop is there (to
compare, or to rule uvloop out when chasing a fault).

Before the loop starts, what the process holds by then (the interpreter, guti's modules,
the run's settings) is moved out of the garbage collector's sight (``gc.freeze``). Why:
a full collection walks every object it tracks, and in a freshly started guti that
takes 3 to 8 ms on this kind of machine, during which no reply is read; a move whose
engine answered 3 ms before its deadline could be forfeited for it. Frozen, those
objects are never walked again and a full collection takes what the games themselves
made to walk (well under a millisecond). The cost: a reference cycle among those
objects that becomes garbage later is never freed (the referee's set-up makes none
worth counting).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import importlib
import os
import weakref
from collections.abc import Callable, Coroutine
from typing import Any, Generic, TypeVar

T = TypeVar("T")


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's loop factory when installed and not declined, else None (asyncio's)."""
    if os.environ.get("GUTI_EVENT_LOOP", "").lower() == "asyncio":
        return None
    try:  # by name: the extra is optional, so type-checking must not need it either
        uvloop = importlib.import_module("uvloop")
    except ImportError:
        return None
    factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    return factory


def run(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)`` on the loop :func:`loop_factory` chooses, with what the
    process holds so far frozen (see the module's docstring)."""
    not_started: OSError | None = None
    try:
        gc.collect()
        gc.freeze()
        runner = asyncio.Runner(loop_factory=loop_factory())
        try:
            return runner.run(main)
        except OSError as exc:
            not_started = exc
            raise
        finally:
            _close(runner, not_started)
    finally:
        main.close()  # never started (a Ctrl-C before the loop ran it): no warning for it


def _close(runner: asyncio.Runner, not_started: OSError | None) -> None:
    """Close ``runner``. A loop that could not even start (no file descriptor left for
    its wake-up pipe, at the limit of open files) cannot be closed cleanly either: it is
    let go without a word, so that the OSError that says why is what the caller sees,
    not the loop's complaints about it."""
    try:
        runner.close()
    except RuntimeError:
        if not_started is None:
            raise
        with contextlib.suppress(RuntimeError):  # its never-run task, when it is collected
            runner.get_loop().set_exception_handler(lambda _loop, _context: None)


class PerLoop(Generic[T]):
    """One object per running event loop, made by ``make(loop)`` when first asked for and
    forgotten with its loop: for what the games of one loop share (their engine starts,
    the loop's lateness watch), which a referee process, a cluster worker's loop or a
    test's new loop each have apart."""

    def __init__(self, make: Callable[[asyncio.AbstractEventLoop], T]) -> None:
        self._make = make
        self._made: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, T] = (
            weakref.WeakKeyDictionary())

    def get(self) -> T:
        """The running loop's object."""
        loop = asyncio.get_running_loop()
        found = self._made.get(loop)
        if found is None:
            found = self._made[loop] = self._make(loop)
        return found
