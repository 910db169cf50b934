"""Folders sent to every cluster worker: an engine that no worker has until the run.

A TOML engine's ``upload = "FOLDER"`` names a folder on the client's machine. The
client packs it (a gzipped tar, so that file modes, an executable script's included,
survive) into the run's worker plugin; each worker unpacks it once, before the run's
check, into its Dask local directory, under a name made of the archive's hash so that
runs sending other contents never share a copy. From then on, every path of the
run's engines that lies under the folder as the client names it (``cmd``, ``dir``,
``args``, the build's folder) is the worker's copy: ``build`` builds it there, and the
engine starts from there.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import tarfile
from collections.abc import Iterable
from pathlib import Path

from guti.referee.execution.cluster_address import ClusterError, EngineSetup

#: Where a worker keeps the folders sent to it, in its Dask local directory.
UPLOADS = "guti-uploads"


def pack_folders(setups: Iterable[EngineSetup]) -> dict[str, bytes]:
    """Each folder the engines ``upload``, packed: {the client's path: tar.gz bytes}; a
    folder that is not there is a ClusterError naming it."""
    packed: dict[str, bytes] = {}
    for name, _build, _cwd, _requires, folder in setups:
        if not folder or folder in packed:
            continue
        if not os.path.isdir(folder):
            raise ClusterError(f"engine {name}: upload {folder}: no such folder")
        data = io.BytesIO()
        with tarfile.open(fileobj=data, mode="w:gz") as tar:
            tar.add(folder, arcname=os.path.basename(folder))
        packed[folder] = data.getvalue()
    return packed


def unpack_folders(packed: dict[str, bytes], root: str) -> dict[str, str]:
    """The folders unpacked under ``root`` (once per content); {the client's path: this
    worker's copy}."""
    places: dict[str, str] = {}
    for folder, data in packed.items():
        target = Path(root) / UPLOADS / hashlib.sha256(data).hexdigest()[:16]
        copy = target / os.path.basename(folder)
        if not copy.exists():
            partial = target.with_name(target.name + f".{os.getpid()}")
            with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
                tar.extractall(partial, filter="tar")
            try:
                partial.rename(target)
            except OSError:  # another worker of this machine unpacked it meanwhile
                shutil.rmtree(partial, ignore_errors=True)
        places[folder] = str(copy)
    return places


def moved(path: str, places: dict[str, str]) -> str:
    """``path`` as this worker names it: under a folder sent to it, the copy's."""
    for folder, copy in places.items():
        if path == folder or path.startswith(folder + os.sep):
            return copy + path[len(folder):]
    return path
