"""Getting a TOML file's engines ready: their required programs and their builds.

A step of its own, which ``guti tournament`` runs after reading its settings: reading a
file runs nothing. An engine whose required program is not on PATH, or whose build
fails, is skipped with one line saying why (a bundle of engines need not all be
installable on every machine). On a cluster neither is seen to here: the builds and the
requirements are handed to every worker (:data:`EngineSetup`), where the engines run,
and a worker lacking one is left out of the run.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from typing import TYPE_CHECKING

from guti.referee.execution.builds import first_missing, run_build

if TYPE_CHECKING:
    from guti.referee.config.given import EngineEntry
    from guti.referee.execution.cluster_address import EngineSetup


def build_engines(
    engines: tuple[EngineEntry, ...], report: Callable[[str], None], on_cluster: bool = False,
) -> tuple[tuple[EngineEntry, ...], tuple[EngineSetup, ...]]:
    """The engines that can run (the others reported as skipped), and, ``on_cluster``,
    the builds and requirements every worker must see to."""
    kept: list[EngineEntry] = []
    setups: list[EngineSetup] = []
    for entry in engines:
        missing = None if on_cluster else first_missing(entry.requires)
        if missing is not None:
            report(f"skipping engine {entry.name}: {missing} is not installed "
                   "(not found on PATH)")
            continue
        if on_cluster:
            if entry.build or entry.requires or entry.upload:
                setups.append((entry.name, entry.build, entry.build_dir, entry.requires,
                               entry.upload))
        elif entry.build:
            failure = run_build(entry.build, entry.build_dir)
            if failure is not None:
                report(f"skipping engine {entry.name}: build {shlex.join(entry.build)} "
                       f"failed: {failure}")
                continue
        kept.append(entry)
    return tuple(kept), tuple(setups)

