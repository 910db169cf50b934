"""An engine's resource limits and sandbox: the settings, how this machine enforces them.

Engine settings ``limits.memory=256M`` (the engine's total memory, all its processes),
``limits.processes=16`` (processes and threads), ``limits.network=off`` (a network
namespace of its own: no network at all), ``limits.files=private`` (a read-only view of
the system, its ``dir=`` writable and a private ``/tmp``: bubblewrap) and
``limits.cpus=N`` (cores on average during its moves, judged from the CPU time each
move used: past it the engine loses), ``limits.ponder=off`` (no CPU off its move: an
engine that uses more than ``limits.offmove_cpu`` seconds of CPU in a game between its
``bestmove`` and its next ``go`` loses) and ``limits.required=true`` (refuse to start when
a limit cannot be enforced here). :func:`enforcement` chooses the means once per
run: a cgroup per engine where one can be made (:mod:`guti.referee.process.cgroups`),
else ``RLIMIT_AS`` (memory, per process) and ``RLIMIT_NPROC`` (processes, counted for
the whole user, and not at all for root); :func:`report_lines` says it in the run's
header, and names every limit that is not enforced, and why. :class:`Confinement` puts
one engine in its limits: its cgroup, and the argv that starts it through
:mod:`guti.referee.process.limited`.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from guti.referee.process.cgroups import CgroupPlace, EngineCgroup, find_place, mib
from guti.rules.numbers import decimal_number, whole_number

#: The engine settings read here.
SANDBOX_KEYS = frozenset({"limits.memory", "limits.processes", "limits.network",
                          "limits.files", "limits.cpus", "limits.required", "limits.ponder",
                          "limits.offmove_cpu"})
#: The CPU seconds an engine with ``limits.ponder=off`` may use off its move in one game,
#: unless ``limits.offmove_cpu`` says otherwise: room for a runtime's own background work
#: (a garbage collector, a JIT compiler, reading its input), far below what a thread left
#: searching takes.
DEFAULT_OFFMOVE_CPU = 0.25
#: CPU time a move may show above ``limits.cpus`` x its time: the CPU is read just before
#: ``go`` is written and after ``bestmove`` is read, the move's time between other
#: instants, so a short move is not judged on that difference.
CPU_SLACK_MS = 20.0
#: The smallest memory limit taken (a smaller one is most likely a missing unit).
MIN_MEMORY = 16 * 2**20
_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
_LIMITED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "limited.py")


class SandboxError(ValueError):
    """A bad limit setting, or a required limit this machine cannot enforce (one line)."""


@dataclass(frozen=True)
class Sandbox:
    """One engine's limits (None / False: no such limit)."""

    memory: int | None = None
    processes: int | None = None
    network_off: bool = False
    required: bool = False
    files_private: bool = False
    cpus: float | None = None
    #: ``limits.ponder=off``: judged on the CPU it uses off its move.
    ponder_off: bool = False
    #: The CPU seconds it may use off its move in a game (with ``ponder_off``).
    offmove_cpu: float = DEFAULT_OFFMOVE_CPU

    def cpu_excess(self, cpu_ms: float | None, elapsed_ms: float) -> str | None:
        """Why a move that used ``cpu_ms`` of CPU in ``elapsed_ms`` broke ``limits.cpus``
        (None: it did not, or nothing is known)."""
        if self.cpus is None or cpu_ms is None or cpu_ms <= self.cpus * elapsed_ms + CPU_SLACK_MS:
            return None
        return (f"CPU limit {self.cpus:g} cores exceeded: {cpu_ms:.0f} ms of CPU in a move of "
                f"{elapsed_ms:.0f} ms ({cpu_ms / max(elapsed_ms, 1.0):.1f} cores)")

    def offmove_excess(self, total_ms: float) -> str | None:
        """Why ``total_ms`` of CPU used off its move in a game breaks ``limits.ponder=off``
        (None: it does not, or pondering is not judged)."""
        if not self.ponder_off or total_ms <= self.offmove_cpu * 1000:
            return None
        return (f"{total_ms / 1000:.2f} s of CPU used off its move in this game "
                f"(limits.ponder=off allows {self.offmove_cpu:g} s)")

    @property
    def active(self) -> bool:
        """Whether the engine must be started inside limits (``limits.cpus`` needs not:
        it is judged from what each move used)."""
        return (self.memory is not None or self.processes is not None or self.network_off
                or self.files_private)


def parse_size(key: str, text: str) -> int:
    """``256M`` / ``2G`` / ``1048576`` (bytes; units K, M, G, T are powers of 1024)."""
    match = re.fullmatch(r"\s*([0-9]{1,18})\s*([KMGT]?)(i?B)?\s*", text, re.IGNORECASE)
    if match is None:
        raise SandboxError(f"{key}={text}: expected a size such as 512M or 2G")
    size = int(match[1]) * _UNITS[match[2].upper()]
    if size < MIN_MEMORY:
        raise SandboxError(f"{key}={text}: at least {mib(MIN_MEMORY)} (give a unit: 512M)")
    return size


def _flag(key: str, text: str, on: str, off: str) -> bool:
    low = text.strip().lower()
    if low in (on, "true", "yes"):
        return True
    if low in (off, "false", "no"):
        return False
    raise SandboxError(f"{key}={text}: expected {on} or {off}")


def _number(tokens: Mapping[str, str], key: str, expected: str, zero_ok: bool) -> float | None:
    """The finite number given for ``key`` (above 0, or at least 0 when ``zero_ok``), None
    when not given; SandboxError naming ``key`` and what was ``expected`` otherwise."""
    if key not in tokens:
        return None
    text = tokens[key].strip()
    read = decimal_number(text)
    value = -1.0 if read is None else read
    if not ((value >= 0 if zero_ok else value > 0) and value < float("inf")):
        raise SandboxError(f"{key}={text}: expected {expected}")
    return value


#: The most ``limits.processes`` may be: Linux's largest process count (``pid_max``).
MAX_PROCESSES = 4_194_304


def parse_sandbox(tokens: Mapping[str, str]) -> Sandbox:
    """The limits among ``tokens`` (``limits.*`` keys); SandboxError names a bad one."""
    memory = processes = None
    if "limits.memory" in tokens:
        memory = parse_size("limits.memory", tokens["limits.memory"])
    if "limits.processes" in tokens:
        text = tokens["limits.processes"].strip()
        processes = whole_number(text, 9)
        if processes is None or not 1 <= processes <= MAX_PROCESSES:
            raise SandboxError(f"limits.processes={text}: expected a whole number from 1 to "
                               f"{MAX_PROCESSES} (the most processes Linux can have)")
    network_off = ("limits.network" in tokens
                   and not _flag("limits.network", tokens["limits.network"], "on", "off"))
    required = ("limits.required" in tokens
                and _flag("limits.required", tokens["limits.required"], "true", "false"))
    cpus = _number(tokens, "limits.cpus", "a number of cores above 0 (1, 2, 0.5)",
                   zero_ok=False)
    files_private = ("limits.files" in tokens
                     and _flag("limits.files", tokens["limits.files"], "private", "shared"))
    ponder_off = ("limits.ponder" in tokens
                  and not _flag("limits.ponder", tokens["limits.ponder"], "on", "off"))
    offmove_cpu = _number(tokens, "limits.offmove_cpu", "CPU seconds of at least 0 (0.25, 1)",
                          zero_ok=True)
    if offmove_cpu is None:
        offmove_cpu = DEFAULT_OFFMOVE_CPU
    return Sandbox(memory, processes, network_off, required, files_private, cpus, ponder_off,
                   offmove_cpu)


@dataclass(frozen=True)
class Enforcement:
    """How this machine enforces each limit: a phrase per limit, or why it cannot."""

    place: CgroupPlace | None
    memory: str | None
    processes: str | None
    network: str | None
    memory_why: str = ""
    processes_why: str = ""
    network_why: str = ""
    bubblewrap: str | None = None
    files_why: str = ""


def _user_namespaces() -> str:
    """Why a network namespace cannot be made here ("" when it can)."""
    if not sys.platform.startswith("linux"):
        return "Linux namespaces are needed"
    if os.geteuid() == 0:
        return ""
    for path in ("/proc/sys/kernel/unprivileged_userns_clone", "/proc/sys/user/max_user_namespaces"):
        try:
            with open(path) as fh:
                if fh.read().strip() == "0":
                    return f"user namespaces are disabled ({path} is 0)"
        except OSError:
            continue
    return ""


@functools.cache
def enforcement() -> Enforcement:
    """What this machine offers (looked at once per process)."""
    linux = sys.platform.startswith("linux")
    place, why = find_place() if linux else (None, "cgroups are Linux's")
    memory = processes = None
    memory_why = processes_why = ""
    if place is not None and place.memory:
        memory = place.describe()
    elif linux:
        memory = "RLIMIT_AS (per process, not the engine's total)"
    else:
        memory_why = why
    if place is not None and place.pids:
        processes = place.describe()
    elif linux and os.geteuid() != 0:
        processes = "RLIMIT_NPROC (counts every process of guti's user)"
    else:
        processes_why = f"{why}, and RLIMIT_NPROC does not apply to root" if linux else why
    network_why = _user_namespaces()
    bubblewrap = shutil.which("bwrap") if linux and not network_why else None
    files_why = network_why or ("" if bubblewrap else "bubblewrap (bwrap) is not installed")
    return Enforcement(place, memory, processes, None if network_why else "a network namespace",
                       memory_why, processes_why, network_why, bubblewrap, files_why)


def unenforced(name: str, sandbox: Sandbox, how: Enforcement) -> list[str]:
    """One line per limit of ``sandbox`` that is not enforced here, saying why."""
    lines = []
    for wanted, means, why, key in (
            (sandbox.memory is not None, how.memory, how.memory_why, "limits.memory"),
            (sandbox.processes is not None, how.processes, how.processes_why, "limits.processes"),
            (sandbox.network_off, how.network, how.network_why, "limits.network"),
            (sandbox.files_private, how.bubblewrap, how.files_why, "limits.files")):
        if wanted and means is None:
            lines.append(f"engine {name}: {key} is not enforced on this machine: {why}")
    cpu_why = None
    if not sys.platform.startswith("linux"):
        cpu_why = "CPU times are read from Linux's /proc"
    elif sandbox.files_private and how.bubblewrap is not None and how.place is None:
        cpu_why = ("with limits.files=private and no cgroup, the process guti can read is "
                   "bubblewrap's, not the engine's")
    if cpu_why is not None:
        for wanted, key in ((sandbox.cpus is not None, "limits.cpus"),
                            (sandbox.ponder_off, "limits.ponder")):
            if wanted:
                lines.append(f"engine {name}: {key} is not enforced on this machine: {cpu_why}")
    return lines


def report_lines(engines: Iterable[tuple[str, Sandbox]]) -> list[str]:
    """The header's lines on limits: how they are enforced, and what is not; SandboxError
    when an engine with ``limits.required=true`` has a limit that cannot be."""
    engines = [(name, box) for name, box in engines
               if box.active or box.cpus is not None or box.ponder_off]
    if not engines:
        return []
    how = enforcement()
    used = []
    if any(box.memory is not None for _, box in engines) and how.memory:
        used.append(f"memory by {how.memory}")
    if any(box.processes is not None for _, box in engines) and how.processes:
        used.append(f"processes by {how.processes}")
    if any(box.network_off for _, box in engines) and how.network:
        used.append(f"network off by {how.network}")
    if any(box.cpus is not None for _, box in engines):
        used.append("cpus by the CPU time of each move")
    if any(box.ponder_off for _, box in engines):
        used.append("ponder off by the CPU time between bestmove and go")
    if any(box.files_private for _, box in engines) and how.bubblewrap:
        used.append(f"files private by bubblewrap ({how.bubblewrap})")
    lines = [f"limits: {'; '.join(used)}"] if used else []
    for name, box in engines:
        missing = unenforced(name, box, how)
        if missing and box.required:
            raise SandboxError(f"{missing[0]} (and limits.required=true)")
        lines += [f"limits: {line}" for line in missing]
    return lines


class Confinement:
    """One engine's limits put in place: :meth:`prepare` before it starts (the argv to
    start instead), :meth:`breach` after a fault, :meth:`close` once it is gone."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox
        self.cgroup: EngineCgroup | None = None

    def prepare(self, argv: list[str], cwd: str | None) -> list[str]:
        """Make the engine's cgroup (OSError if that fails) and return the argv that
        starts ``argv`` (to run in ``cwd``, its writable folder) in its limits."""
        box, how = self.sandbox, enforcement()
        options: list[str] = []
        if how.place is not None:  # even with no limit of its own: to know its processes
            self.cgroup = EngineCgroup(how.place, box.memory, box.processes, track=True)
            for folder in self.cgroup.create():
                options += ["--cgroup", folder]
        if box.memory is not None and (self.cgroup is None or self.cgroup.memory is None) \
                and how.memory is not None:
            options += ["--address-space", str(box.memory)]
        if box.processes is not None and (self.cgroup is None or self.cgroup.processes is None) \
                and how.processes is not None:
            options += ["--processes", str(box.processes)]
        if box.network_off and how.network is not None:
            options.append("--network-off")
        if box.files_private and how.bubblewrap is not None:
            options += ["--bwrap", how.bubblewrap]
            if cwd is not None:
                options += ["--writable", os.path.abspath(cwd)]
        return [sys.executable, "-I", "-S", _LIMITED, *options, "--", *argv]

    def breach(self, memory_only: bool = False) -> str | None:
        """Which limit the engine ran into (cgroups only know; ``memory_only``: whether
        it ran into its memory limit), or None."""
        return None if self.cgroup is None else self.cgroup.breach(memory_only)

    def kill_now(self) -> None:
        """SIGKILL everything in the engine's cgroup at once (no waiting, nothing removed)."""
        if self.cgroup is not None:
            self.cgroup.kill_members()

    async def close(self) -> None:
        """Kill what is left of the engine and remove its cgroup (bounded waits)."""
        if self.cgroup is not None:
            await self.cgroup.close()
            self.cgroup = None
