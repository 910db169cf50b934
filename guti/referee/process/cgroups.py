"""A control group per engine: its memory and process limits, what it used, its end.

Linux counts memory and processes per cgroup, for a program and everything it starts,
and kills (memory) or refuses (processes) past the limit. guti makes one cgroup per
confined engine below its own (cgroup v2 with the ``memory`` and ``pids`` controllers
enabled for guti's cgroup, or v1's ``memory`` and ``pids`` hierarchies), the engine joins
it before its exec (:mod:`guti.referee.process.limited`), and when the engine is done
everything still in it is killed and the cgroup removed. Where none is writable,
:func:`find_place` says why, and the caller falls back to rlimits or to not enforcing.

The same cgroup counts the CPU time of everything the engine ran, processes that have
ended included (v2's ``cpu.stat``, in every cgroup; v1's ``cpuacct`` hierarchy, joined
too where it is writable): summing ``/proc`` over the members would miss a helper
process that ran and ended between two readings.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
from dataclasses import dataclass

_counter = itertools.count(1)


@dataclass(frozen=True)
class CgroupPlace:
    """Where engines' cgroups are made: v2 one folder for both controllers, v1 one per
    controller (None: that controller is not available)."""

    version: int
    memory: str | None
    pids: str | None
    cpu: str | None = None  # where the CPU is counted (v1: the cpuacct hierarchy)

    def describe(self) -> str:
        have = [name for name, where in (("memory", self.memory), ("pids", self.pids)) if where]
        return f"cgroup v{self.version} ({', '.join(have)})"


def _mounts() -> list[tuple[str, str, set[str]]]:
    """(mount point, type, options) of every cgroup file system."""
    found = []
    with contextlib.suppress(OSError), open("/proc/self/mounts") as fh:
        for line in fh:
            parts = line.split()
            if len(parts) >= 4 and parts[2] in ("cgroup", "cgroup2"):
                found.append((parts[1], parts[2], set(parts[3].split(","))))
    return found


def _own_paths() -> dict[str, str]:
    """guti's own cgroup per v1 controller, and ``""`` for v2."""
    paths: dict[str, str] = {}
    with contextlib.suppress(OSError), open("/proc/self/cgroup") as fh:
        for line in fh:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            for name in controllers.split(","):
                paths[name] = path
    return paths


def _probe(parent: str) -> bool:
    """Whether a cgroup can be made (and removed) in ``parent``."""
    probe = os.path.join(parent, f"guti-probe-{os.getpid()}")
    try:
        os.mkdir(probe)
        os.rmdir(probe)
    except OSError:
        return False
    return True


def _writable_parent(mount: str, own: str | None) -> str | None:
    """guti's own cgroup in that mount if cgroups can be made there, else the mount's root."""
    candidates = [os.path.join(mount, own.lstrip("/"))] if own else []
    candidates.append(mount)
    return next((c for c in candidates if os.path.isdir(c) and _probe(c)), None)


def _v2_place(mount: str, own: str | None) -> CgroupPlace | None:
    parent = _writable_parent(mount, own)
    if parent is None:
        return None
    control = os.path.join(parent, "cgroup.subtree_control")
    for name in ("memory", "pids"):  # enabled for guti's children, where it may be
        with contextlib.suppress(OSError), open(control, "w") as fh:
            fh.write(f"+{name}")
    enabled = set(_read(control).split())  # what is, whatever the writes did
    if not enabled & {"memory", "pids"}:
        return None
    return CgroupPlace(2, parent if "memory" in enabled else None,
                       parent if "pids" in enabled else None, cpu=parent)


def remove_stale(parent: str) -> None:
    """Remove the empty cgroups left in ``parent`` by a guti that was killed (named
    ``guti-PID-N``, PID no longer running); one still in use is never touched."""
    with contextlib.suppress(OSError):
        for name in os.listdir(parent):
            parts = name.split("-")
            if len(parts) == 3 and parts[0] == "guti" and parts[1].isdigit() \
                    and not os.path.exists(f"/proc/{parts[1]}"):
                with contextlib.suppress(OSError):
                    os.rmdir(os.path.join(parent, name))  # fails unless empty


def find_place() -> tuple[CgroupPlace | None, str]:
    """Where engines' cgroups can be made, or None and why not (one phrase)."""
    mounts = _mounts()
    if not mounts:
        return None, "no cgroup file system is mounted"
    place = _find_place(mounts, _own_paths())
    if place is None:
        return None, "no writable cgroup with the memory or pids controller"
    for parent in {place.memory, place.pids, place.cpu} - {None}:
        remove_stale(str(parent))
    return place, ""


def _find_place(mounts: list[tuple[str, str, set[str]]], own: dict[str, str]
                ) -> CgroupPlace | None:
    for mount, kind, _ in mounts:
        if kind == "cgroup2":
            place = _v2_place(mount, own.get(""))
            if place is not None:
                return place
    v1 = {}
    for mount, kind, options in mounts:
        for name in ("memory", "pids", "cpuacct"):
            if kind == "cgroup" and name in options and name not in v1:
                parent = _writable_parent(mount, own.get(name))
                if parent is not None:
                    v1[name] = parent
    if not v1.keys() & {"memory", "pids"}:
        return None
    return CgroupPlace(1, v1.get("memory"), v1.get("pids"), v1.get("cpuacct"))


def _read(path: str) -> str:
    try:
        with open(path) as fh:
            return fh.read()
    except OSError:
        return ""


def _field(text: str, key: str) -> int:
    """The number after ``key`` in a ``key value`` per line file (0 if absent)."""
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name == key and value.strip().isdigit():
            return int(value)
    return 0


def mib(size: int) -> str:
    """``268435456`` -> ``256 MiB``."""
    return f"{size / 2**20:.4g} MiB"


class EngineCgroup:
    """The cgroup(s) of one engine, made with its limits; see the module's docstring."""

    def __init__(self, place: CgroupPlace, memory: int | None, processes: int | None,
                 track: bool = False) -> None:
        """``track``: a cgroup even without a memory or process limit, so that everything
        the engine starts is known (to be measured, and killed at its end)."""
        self.place = place
        self.memory = memory if place.memory else None
        self.processes = processes if place.pids else None
        name = f"guti-{os.getpid()}-{next(_counter)}"
        self._kills_told = 0  # processes killed for memory that a per-move look has seen
        self.dirs: dict[str, str] = {}
        if self.memory is not None and place.memory:
            self.dirs["memory"] = os.path.join(place.memory, name)
        if place.pids and (self.processes is not None or (track and not self.dirs)):
            self.dirs["pids"] = os.path.join(place.pids, name)
        elif place.memory and track and not self.dirs:
            self.dirs["memory"] = os.path.join(place.memory, name)
        if place.cpu and self.dirs:  # v2: one of the folders above; v1: one more to join
            self.dirs["cpu"] = os.path.join(place.cpu, name)

    def create(self) -> list[str]:
        """Make the cgroup(s) and write the limits; the folders the engine must join.
        OSError if that fails (then nothing is left)."""
        made: list[str] = []
        try:
            for folder in dict.fromkeys(self.dirs.values()):
                os.mkdir(folder)
                made.append(folder)
            if self.memory is not None:
                self._write_memory(self.dirs["memory"], self.memory)
            if self.processes is not None:
                self._write(self.dirs["pids"], "pids.max", str(self.processes))
        except OSError:
            for folder in made:
                with contextlib.suppress(OSError):
                    os.rmdir(folder)
            raise
        return made

    def _write(self, folder: str, name: str, value: str) -> None:
        with open(os.path.join(folder, name), "w") as fh:
            fh.write(value)

    def _write_memory(self, folder: str, size: int) -> None:
        if self.place.version == 2:
            self._write(folder, "memory.max", str(size))
            with contextlib.suppress(OSError):  # no swap to escape to
                self._write(folder, "memory.swap.max", "0")
        else:
            self._write(folder, "memory.limit_in_bytes", str(size))
            with contextlib.suppress(OSError):
                self._write(folder, "memory.memsw.limit_in_bytes", str(size))

    def peak_memory(self) -> int | None:
        """The most memory the engine's processes held at once (None: not known)."""
        folder = self.dirs.get("memory")
        if folder is None:
            return None
        name = "memory.peak" if self.place.version == 2 else "memory.max_usage_in_bytes"
        text = _read(os.path.join(folder, name)).strip()
        return int(text) if text.isdigit() else None

    def cpu_seconds(self) -> float | None:
        """The CPU time of every process the engine ran in its cgroup, ended ones
        included (None: not counted here)."""
        folder = self.dirs.get("cpu")
        if folder is None:
            return None
        if self.place.version == 2:
            usec = _field(_read(os.path.join(folder, "cpu.stat")), "usage_usec")
            return usec / 1e6 if usec else None
        text = _read(os.path.join(folder, "cpuacct.usage")).strip()
        return int(text) / 1e9 if text.isdigit() else None

    def breach(self, memory_only: bool = False) -> str | None:
        """Which limit the engine ran into, with its peak use, or None; ``memory_only``:
        only the memory limit (past which the kernel killed a process of the engine)."""
        folder = self.dirs.get("memory")
        if folder is not None and self.memory is not None:
            events = (_read(os.path.join(folder, "memory.events")) if self.place.version == 2
                      else _read(os.path.join(folder, "memory.oom_control")))
            kills = _field(events, "oom_kill") or _field(events, "oom")
            if memory_only:  # asked after every move: only a kill since the last asking
                kills, self._kills_told = kills - self._kills_told, kills
            if kills:
                peak = self.peak_memory()
                seen = f" (peak {mib(peak)})" if peak else ""
                return (f"memory limit {mib(self.memory)} reached{seen}: the kernel killed "
                        "a process of the engine")
        folder = self.dirs.get("pids")
        if folder is not None and self.processes is not None and not memory_only:
            refused = _field(_read(os.path.join(folder, "pids.events")), "max")
            if refused:
                starts = "start" if refused == 1 else "starts"
                return (f"process limit {self.processes} reached ({refused} {starts} of a "
                        "process or thread refused)")
        return None

    def members(self) -> set[int]:
        pids: set[int] = set()
        for folder in set(self.dirs.values()):
            pids.update(int(p) for p in _read(os.path.join(folder, "cgroup.procs")).split())
        return pids

    def kill_members(self) -> bool:
        """SIGKILL every process in the cgroup, and reap those that are guti's children
        (orphans come back to guti, their subreaper); whether any was left."""
        left = self.members()
        for pid in left:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(pid, os.WNOHANG)  # only guti's own children are reaped
        return bool(left)

    async def close(self) -> None:
        """Kill everything left in the cgroup, reap those that came back to guti, remove it.
        Bounded: a cgroup that cannot be removed within about a second is left (a later
        run removes it: :func:`remove_stale`)."""
        import asyncio  # here, not above: reading limits from settings needs no event loop

        for _ in range(50):
            if not self.kill_members():
                break
            await asyncio.sleep(0.02)
        for folder in set(self.dirs.values()):
            for _ in range(50):
                try:
                    os.rmdir(folder)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    await asyncio.sleep(0.02)
