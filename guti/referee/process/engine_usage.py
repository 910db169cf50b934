"""What one engine may use and what it has used: its limits put in place when it starts,
and readings of its CPU time and peak memory while it runs.

An :class:`~guti.referee.process.engine_process.EngineProcess` holds one
:class:`EngineUsage`: it asks it for the argv to start (:meth:`EngineUsage.confined_argv`,
which makes the engine's cgroup when its limits need one), tells it the pid, and hands
its readings on to the game (:meth:`EngineUsage.cpu_clock`, :meth:`EngineUsage.peak_memory`,
:meth:`EngineUsage.breach`). An engine in a cgroup of its own is read whole (all its
processes, those that have ended too where the cgroup counts CPU); else its leading
process is (all its threads, and for an engine judged on its CPU the children it has
reaped).
"""

from __future__ import annotations

from collections.abc import Callable

from guti.referee.process.cpu_time import ProcessCpu, cpu_seconds, cpu_unknown
from guti.referee.process.sandbox import Confinement, Sandbox
from guti.referee.process.usage import peak_rss


class EngineUsage:
    """One engine's limits in place (a :class:`~guti.referee.process.sandbox.Confinement`
    when it has active ones) and the readers of what it uses. Set :attr:`pid` once it
    runs (:meth:`started`); :meth:`release` once it is gone, :meth:`close` to let go of
    the open files."""

    def __init__(self, sandbox: Sandbox | None) -> None:
        self.sandbox = sandbox
        self.pid: int | None = None
        self.confinement: Confinement | None = None
        self._cpu: ProcessCpu | None = None  # the leading process's readings

    def started(self, pid: int, reaped: Callable[[], bool]) -> None:
        """The engine runs as ``pid``; ``reaped`` tells once that process has been reaped
        (from then on, nothing is read from the pid)."""
        self.pid = pid
        judged = self.sandbox is not None and (
            self.sandbox.cpus is not None or self.sandbox.ponder_off)
        self._cpu = ProcessCpu(pid, reaped, children=judged)

    def confined_argv(self, argv: list[str], cwd: str | None) -> list[str]:
        """The argv to start: ``argv`` itself, or, when the engine has active limits, the
        one starting it inside them (its cgroup made now: OSError if that fails)."""
        if self.sandbox is None or not self.sandbox.active:
            return argv
        self.confinement = Confinement(self.sandbox)
        return self.confinement.prepare(argv, cwd)

    def cpu_clock(self) -> Callable[[], float | None]:
        """A function that reads the CPU seconds the engine has used so far (None: not
        known; :mod:`guti.referee.process.cpu_time`). The referee takes it once a game
        and reads it before and after every move."""
        if self._cpu is None:
            return cpu_unknown
        if self.confinement is None or self.confinement.cgroup is None:
            return self._cpu.seconds
        return self._read_cpu

    def _read_cpu(self) -> float | None:
        """The CPU of every process in the engine's cgroup (None: it is gone)."""
        cgroup = None if self.confinement is None else self.confinement.cgroup
        if cgroup is None:
            return None
        counted = cgroup.cpu_seconds()
        return counted if counted is not None else cpu_seconds(cgroup.members())

    def peak_memory(self) -> tuple[int | None, str]:
        """The most memory the engine has held at once since it started (bytes; None: not
        known) and where that comes from: ``cgroup`` (all its processes together, when it
        has a memory cgroup) or ``VmHWM`` (the peak resident memory of its largest
        process, read from /proc while it still runs)."""
        cgroup = None if self.confinement is None else self.confinement.cgroup
        peaks: list[int | None] = []
        if cgroup is not None:
            peak = cgroup.peak_memory()
            if peak is not None:
                return peak, "cgroup"
            others = cgroup.members() - {self.pid}
            if others:
                peaks.append(peak_rss(others))
        if self._cpu is not None:
            peaks.append(self._cpu.peak_memory())
        known = [peak for peak in peaks if peak]
        return (max(known) if known else None), "VmHWM"

    def breach(self, memory_only: bool = False) -> str | None:
        """The limit the engine ran into (its memory, its processes; ``memory_only``: its
        memory), with its peak use, or None (none, or not known: only a cgroup tells)."""
        return None if self.confinement is None else self.confinement.breach(memory_only)

    async def release(self) -> None:
        """The engine is gone: kill what is left in its cgroup, and remove the cgroup."""
        if self.confinement is not None:
            await self.confinement.close()

    def kill_now(self) -> None:
        """SIGKILL what is in its cgroup at once (no waiting)."""
        if self.confinement is not None:
            self.confinement.kill_now()

    def close(self) -> None:
        """Let go of the open /proc files."""
        if self._cpu is not None:
            self._cpu.close()
