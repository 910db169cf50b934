"""A Ctrl-C in the instant a run starts its event loop: the run is interrupted (exit 130,
resumable or nothing to resume), never a warning about a coroutine nobody ran nor a
complaint about a database that was never made."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from guti.referee.cli import tournament_play
from guti.referee.config.tournament import settings_from_argv
from guti.referee.process import event_loop

FAULTY = str(Path(__file__).parent / "engines" / "faulty.py")


def _interrupt(*_args: object) -> None:
    raise KeyboardInterrupt


def test_a_ctrl_c_before_the_loop_runs_the_coroutine_closes_it(monkeypatch) -> None:
    async def main() -> int:
        return 1

    coroutine = main()
    monkeypatch.setattr(event_loop.gc, "collect", _interrupt)
    with pytest.raises(KeyboardInterrupt):
        event_loop.run(coroutine)
    assert coroutine.cr_frame is None  # closed: Python warns of no unawaited coroutine


def test_a_tournament_interrupted_before_its_database_exists_exits_130(
        tmp_path, monkeypatch, capsys) -> None:
    db = tmp_path / "t.db"
    engines = [word for name in "AB" for word in
               ("-engine", f"cmd={sys.executable}", f"args={FAULTY}", f"name={name}")]
    settings = settings_from_argv([*engines, "-each", "tc=10", "-db", str(db)], print)

    def interrupted(main):  # the loop's start, hit by a Ctrl-C before any game
        main.close()
        raise KeyboardInterrupt

    monkeypatch.setattr(tournament_play.event_loop, "run", interrupted)
    assert tournament_play.play_tournament(settings, settings.execution_plan(None)) == 130
    err = capsys.readouterr().err
    assert err == "guti tournament: interrupted\n", err
    assert not db.exists()
