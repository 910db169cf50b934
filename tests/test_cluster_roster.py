"""The cluster roster's view of silent workers, fed the heartbeats a scheduler reports.

The roster compares each worker's last heartbeat (the scheduler's own time of it) only
with the one it read before, on this client's clock: these tests drive that clock and
the beats, and read what the roster counts and says. The run on a real cluster with a
frozen worker is in ``test_cluster_survival``.
"""

from __future__ import annotations

import pytest

pytest.importorskip("distributed", reason="-cluster needs the cluster extra (distributed)")

from guti.referee.execution import cluster_roster  # noqa: E402
from guti.referee.execution.cluster_roster import WORKER_SILENCE, WorkerRoster  # noqa: E402


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The roster's clock, set by the test: ``clock[0]`` seconds."""
    now = [1000.0]
    monkeypatch.setattr(cluster_roster.time, "monotonic", lambda: now[0])
    return now


def roster_of(said: list[str]) -> WorkerRoster:
    roster = WorkerRoster("guti-run", said.append)
    roster.slots = {"tcp://a:1": 2, "tcp://b:1": 1}
    roster.names = {"tcp://a:1": "alpha", "tcp://b:1": "tcp://b:1"}
    return roster


def test_a_worker_whose_heartbeat_stops_is_silent_after_the_silence_and_heard_again(clock):
    said: list[str] = []
    roster = roster_of(said)
    roster._listen({"tcp://a:1": 5.0, "tcp://b:1": 7.0})
    assert roster.silent == set()
    clock[0] += WORKER_SILENCE - 1
    # b beats on; a's beat is the same as before, but not yet for the whole silence
    roster._listen({"tcp://a:1": 5.0, "tcp://b:1": 8.0})
    assert roster.silent == set()
    assert roster.concurrency == 3 and said == []
    clock[0] += 1
    roster._listen({"tcp://a:1": 5.0, "tcp://b:1": 9.0})
    assert roster.silent == {"tcp://a:1"}
    assert roster.playing == ["tcp://b:1"] and roster.concurrency == 1
    assert said == ["worker alpha: no heartbeat for 30 s (stopped or frozen?); its games "
                    "are played on the other workers"]
    clock[0] += 60
    roster._listen({"tcp://a:1": 5.0, "tcp://b:1": 10.0})  # said once
    assert len(said) == 1 and roster.silent == {"tcp://a:1"}
    clock[0] += 1
    roster._listen({"tcp://a:1": 6.0, "tcp://b:1": 11.0})
    assert roster.silent == set() and roster.concurrency == 3
    assert said[1:] == ["worker alpha is heard again; it plays again"]


def test_only_workers_fit_for_the_run_are_counted_silent(clock):
    said: list[str] = []
    roster = roster_of(said)
    roster._listen({"tcp://a:1": 5.0, "tcp://c:1": 1.0})  # c holds none of the run's slots
    clock[0] += WORKER_SILENCE
    roster._listen({"tcp://a:1": 6.0, "tcp://c:1": 1.0})
    assert roster.silent == set() and said == []


def test_a_silent_worker_that_leaves_is_forgotten_without_a_word(clock):
    said: list[str] = []
    roster = roster_of(said)
    roster._listen({"tcp://a:1": 5.0, "tcp://b:1": 1.0})
    clock[0] += WORKER_SILENCE
    roster._listen({"tcp://a:1": 6.0, "tcp://b:1": 1.0})
    assert roster.silent == {"tcp://b:1"}
    roster.slots.pop("tcp://b:1")  # the scheduler dropped it (its worker-ttl)
    roster._listen({"tcp://a:1": 7.0})
    assert roster.silent == set() and len(said) == 1


def test_the_only_worker_silent_is_waited_for_and_one_without_heartbeat_times_never_is(clock):
    said: list[str] = []
    roster = roster_of(said)
    roster.slots.pop("tcp://b:1")
    roster._listen({"tcp://a:1": 5.0, "tcp://c:1": None})
    roster.slots["tcp://c:1"] = 1  # a scheduler that reports no heartbeat time for c
    clock[0] += WORKER_SILENCE
    roster._listen({"tcp://a:1": 5.0, "tcp://c:1": None})
    assert roster.silent == {"tcp://a:1"}
    assert said == ["worker alpha: no heartbeat for 30 s (stopped or frozen?); its games are "
                    "played on the other workers"]
    roster.slots.pop("tcp://c:1")
    roster.silent = set()
    said.clear()
    roster._listen({"tcp://a:1": 5.0})
    assert roster.silent == {"tcp://a:1"}
    assert said == ["worker alpha: no heartbeat for 30 s (stopped or frozen?); the run waits "
                    "for it"]
