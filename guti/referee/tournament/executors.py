"""Which executor plays the games: the local one, or Dask workers with ``-cluster``.

A module of its own so that Dask is imported only when ``-cluster`` was given (a run
without it never loads Dask), and a missing Dask is one clear line, not a traceback.
"""

from __future__ import annotations

from typing import Any

from guti.referee.tournament.cluster_address import ClusterAddress, ClusterError


def cluster_executor(address: ClusterAddress, *args: Any, **kwargs: Any) -> Any:
    """A :class:`~guti.referee.tournament.cluster.ClusterExecutor` (arguments as its own);
    Dask is imported here, only when ``-cluster`` was given."""
    try:
        from guti.referee.tournament.cluster import ClusterExecutor
    except ImportError as exc:
        raise ClusterError(
            f"-cluster {address.text} needs Dask: pip install 'guti[cluster]' ({exc})"
        ) from None
    return ClusterExecutor(address, *args, **kwargs)
