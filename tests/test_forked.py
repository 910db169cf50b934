"""A child forked from guti (``guti/referee/process/forked.py``): what it inherits and what not.

Why: ``-referees`` forks its referee processes from guti before the event loop starts, so
that they are ready at once; a forked child holds copies of everything guti had open and
installed, and each of those is a way to go wrong (a database file held open, a pipe whose
end of input never comes, a signal handler that wakes guti's loop, a library's lock). Each
scenario runs in a fresh Python (``python -c``), where no other test's threads or loops
are about, and reports what its child saw as JSON on its standard output.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from guti.referee.process.forked import can_fork
from tests.conftest import ROOT, wait_for

LINUX = pytest.mark.skipif(not sys.platform.startswith("linux") or not hasattr(os, "pidfd_open"),
                           reason="forked referee processes are Linux only (pidfd)")


def scenario(body: str, timeout: float = 60) -> dict:
    """Run ``body`` (Python, guti importable) in a fresh interpreter; its last line of
    output, as JSON."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(body)], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@LINUX
def test_a_forked_child_keeps_only_its_link_and_stderr_and_is_named():
    """Guti's open file (a database, say) and the pipes of another child are not held by
    the child; its standard input and output are its link; it runs in a session of its
    own under its own name."""
    seen = scenario("""
        import json, os, tempfile
        from guti.referee.process.forked import fork_child

        def child() -> int:
            fds = {fd: os.readlink(f"/proc/self/fd/{fd}") for fd in map(int, os.listdir("/proc/self/fd"))
                   if os.path.exists(f"/proc/self/fd/{fd}")}
            line = input()
            with open("/proc/self/comm") as fh:
                name = fh.read().strip()
            os.write(1, json.dumps({"fds": fds, "line": line, "sid": os.getsid(0),
                                    "pid": os.getpid(), "name": name}).encode() + b"\\n")
            return 0

        held = tempfile.NamedTemporaryFile(prefix="guti-db-")
        first = fork_child(lambda: (input(), 0)[1], "guti-first")
        second = fork_child(child, "guti-referee")
        os.write(second.to_child, b"hello\\n")
        report = json.loads(os.fdopen(second.from_child).readline())
        _, status = os.waitpid(second.pid, 0)
        report["status"] = os.waitstatus_to_exitcode(status)
        report["held"] = held.name
        report["first"] = [os.readlink(f"/proc/self/fd/{fd}") for fd in (first.to_child, first.from_child)]
        first.discard()
        report["parent_sid"] = os.getsid(0)
        print(json.dumps(report))
    """)
    assert seen["status"] == 0 and seen["line"] == "hello"
    assert seen["name"] == "guti-referee"
    assert seen["sid"] == seen["pid"] != seen["parent_sid"]
    links = set(seen["fds"].values())
    assert seen["held"] not in links
    assert not links & set(seen["first"]), "the child holds the other child's pipes"
    # 0 and 1 are its link (pipes), 2 is guti's stderr; nothing else of guti's is open
    assert seen["fds"]["0"].startswith("pipe:") and seen["fds"]["1"].startswith("pipe:")
    assert set(seen["fds"]) == {"0", "1", "2"}, seen["fds"]


@LINUX
def test_the_adopted_child_s_exit_status_comes_from_its_pidfd():
    """In guti's loop the child is a process like ``asyncio``'s: its messages on its
    stdout, its exit status from ``wait()`` (negative: the signal that killed it), and
    it is reaped, not left a zombie."""
    seen = scenario("""
        import asyncio, json, os, signal
        from guti.referee.process.forked import fork_child

        def speaks() -> int:
            os.write(1, os.read(0, 100).upper())
            return 3

        def dies() -> int:
            os.kill(os.getpid(), signal.SIGKILL)
            return 0

        children = [fork_child(speaks, "a"), fork_child(dies, "b")]

        async def main():
            one, two = [await child.adopt() for child in children]
            one.stdin.write(b"ply\\n")
            line = await one.stdout.readline()
            codes = [await one.wait(), await two.wait()]
            return {"line": line.decode(), "codes": codes, "returncodes": [one.returncode, two.returncode],
                    "zombies": [os.path.exists(f"/proc/{c.pid}") for c in children]}

        print(json.dumps(asyncio.run(main())))
    """)
    assert seen["line"] == "PLY\n"
    assert seen["codes"] == seen["returncodes"] == [3, -9]
    assert seen["zombies"] == [False, False]


@LINUX
def test_a_child_forked_after_an_event_loop_ran_runs_one_of_its_own():
    """uvloop (libuv) re-creates its signal lock's pipe in a forked child; closing every
    descriptor above 2 closed that one too and the child aborted (SIGABRT) at its first
    subprocess. What is closed is what was inherited; a second loop runs in the child,
    with a subprocess, on asyncio's loop and on uvloop where it is installed."""
    loops = ["asyncio"] + (["uvloop"] if importlib.util.find_spec("uvloop") else [])
    for name in loops:
        seen = scenario(f"""
            import asyncio, json, os, threading
            os.environ["GUTI_EVENT_LOOP"] = "{name}"
            from guti.referee.process import event_loop
            from guti.referee.process.forked import fork_child

            async def spawn_true() -> int:
                proc = await asyncio.create_subprocess_exec("true")
                return await proc.wait()

            first = event_loop.run(spawn_true())  # a loop ran, with a subprocess
            for thread in threading.enumerate():  # asyncio's thread that waited for it
                if thread is not threading.main_thread():  # ends just after: wait for that
                    thread.join(30)
            child = fork_child(lambda: event_loop.run(spawn_true()), "guti-referee")
            _, status = os.waitpid(child.pid, 0)
            child.discard()
            print(json.dumps({{"first": first, "child": os.waitstatus_to_exitcode(status),
                              "loop": type(asyncio.new_event_loop()).__module__}}))
        """)
        assert seen == {"first": 0, "child": 0, "loop": seen["loop"]}, (name, seen)


@LINUX
def test_an_unused_child_is_discarded_and_one_outlives_no_parent():
    """``discard`` ends a child guti did not use (end of its input) and reaps it; a
    child whose parent is killed is killed by the kernel (the parent-death signal)."""
    seen = scenario("""
        import json, os, sys
        from guti.referee.process.forked import fork_child

        unused = fork_child(lambda: (sys.stdin.read(), 0)[1], "guti-referee")
        unused.discard()
        print(json.dumps({"gone": not os.path.exists(f"/proc/{unused.pid}")}))
    """)
    orphaned = subprocess.run([sys.executable, "-c", textwrap.dedent("""
        import os, time
        from guti.referee.process.forked import fork_child
        child = fork_child(lambda: (time.sleep(60), 0)[1], "guti-referee")
        print(child.pid, flush=True)
        os.kill(os.getpid(), 9)
    """)], cwd=ROOT, capture_output=True, text=True, timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    seen["orphan"] = int(orphaned.stdout.split()[0])
    assert seen["gone"]
    orphan = seen["orphan"]

    def orphan_gone() -> bool:
        try:
            with open(f"/proc/{orphan}/stat") as fh:
                return fh.read().rsplit(")", 1)[1].split()[0] == "Z"  # reaped soon by init
        except OSError:
            return True

    wait_for(orphan_gone, "the orphaned child killed with its parent", 10)


def test_no_fork_from_a_running_loop_nor_beside_another_thread():
    """Forking copies the loop's descriptors and other threads' locks: refused, and the
    pool starts new interpreters instead."""

    async def inside() -> bool:
        return can_fork()

    assert asyncio.run(inside()) is False
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert can_fork() is False
    finally:
        stop.set()
        other.join()
    result: list[bool] = []
    worker = threading.Thread(target=lambda: result.append(can_fork()))
    worker.start()
    worker.join()
    assert result == [False]
    deadline = time.monotonic() + 5
    while threading.active_count() > 1 and time.monotonic() < deadline:
        time.sleep(0.01)  # another test's threads may linger: then the answer is no
    if threading.active_count() == 1 and sys.platform.startswith("linux"):
        assert can_fork() is hasattr(os, "pidfd_open")


@LINUX
def test_a_forked_lifeline_watcher_outlives_its_parent_and_kills_the_groups():
    """The lifeline's watcher forked before the loop (``start_lifeline``) has no
    parent-death signal: when its parent is SIGKILLed it is still there to SIGKILL every
    engine group registered with it, a grandchild that ignores SIGTERM included."""
    started = subprocess.run([sys.executable, "-c", textwrap.dedent("""
        import os, subprocess, sys, time
        from guti.referee.process import lifeline
        from guti.referee.process.forked import start_lifeline

        start_lifeline()
        engine = subprocess.Popen(["sh", "-c", "trap '' TERM; sleep 60 & wait"],
                                  start_new_session=True)
        lifeline.watch(engine.pid)
        watcher = lifeline._watcher.pid

        def name() -> str:
            with open(f"/proc/{watcher}/comm") as fh:
                return fh.read().strip()

        # the child names itself once it runs: wait for that event (fork returns first)
        deadline = time.monotonic() + 30
        while name() != "guti-lifeline" and time.monotonic() < deadline:
            time.sleep(0.005)
        print(engine.pid, watcher, name(), flush=True)
        os.kill(os.getpid(), 9)
    """)], cwd=ROOT, capture_output=True, text=True, timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    engine, watcher, name = started.stdout.split()
    assert name == "guti-lifeline"

    def group_gone() -> bool:
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open(f"/proc/{entry}/stat") as fh:
                        fields = fh.read().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                if fields[3] == engine and fields[0] != "Z":  # its group, not a zombie
                    return False
        return True

    wait_for(group_gone, "the engine's group killed by the watcher", 10)
    wait_for(lambda: not os.path.exists(f"/proc/{watcher}/stat")
             or open(f"/proc/{watcher}/stat").read().rsplit(")", 1)[1].split()[0] == "Z",
             "the watcher gone once its work is done", 10)
