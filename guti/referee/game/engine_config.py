"""How to start one engine: an argv list, a directory, a name, options, limits.

Built from cutechess-cli style tokens (the words after ``-engine`` and
``-each``)::

    cmd=PATH args="-x --threads 2" name=N dir=D option.Hash=64
    stderr=FILE restart=on|off proto=ugi tc=5+0.05 st=0.1 depth=N nodes=N timemargin=MS
    limits.memory=512M limits.processes=16 limits.network=off limits.files=private
    limits.cpus=1 limits.ponder=off limits.offmove_cpu=0.25 limits.required=true

``args`` is split as a POSIX shell would split it (``shlex``) but no shell
is ever run, so quoting works and nothing is interpreted. ``-each`` tokens
are applied first and the engine's own tokens override them key by key
(``option.X`` keys merge). ``cmd`` is looked up in ``dir`` first when it is
a relative path containing a ``/``, else on ``PATH``, like ``execvp`` does. An engine
that runs on another machine (a cluster worker) is neither looked up nor checked
here: its ``cmd`` and ``dir`` are that machine's, and it starts them as given.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable
from dataclasses import dataclass, field

from guti.referee.game.limits import LIMIT_KEYS, Limits, TimeControlError, parse_limits
from guti.referee.process.sandbox import SANDBOX_KEYS, Sandbox, SandboxError, parse_sandbox

#: Keys an engine token may have besides ``option.NAME`` and the limit keys.
ENGINE_KEYS = frozenset({"cmd", "args", "name", "dir", "stderr", "restart", "proto"})


class EngineConfigError(ValueError):
    """A malformed engine definition; the message is one line naming the token."""


@dataclass
class EngineConfig:
    """Everything needed to start and configure one engine.

    ``restart``: start a fresh process for every game (cutechess ``restart=on``);
    otherwise the process is kept between games and restarted only after a fault.
    ``limits``: the time control for this engine (None: the caller's default).
    ``stderr_path``: where the engine's stderr goes (None: the caller decides).
    ``sandbox``: its resource limits (:mod:`guti.referee.process.sandbox`; None: none).
    """

    name: str
    argv: list[str]
    cwd: str | None = None
    options: dict[str, str] = field(default_factory=dict)
    restart: bool = False
    limits: Limits | None = None
    stderr_path: str | None = None
    sandbox: Sandbox | None = None


def _on_off(key: str, value: str) -> bool:
    low = value.lower()
    if low in ("on", "true", "yes", "1"):
        return True
    if low in ("off", "false", "no", "0"):
        return False
    raise EngineConfigError(f"{key}={value}: expected on or off")


def resolve_command(cmd: str, cwd: str | None) -> str:
    """Resolve ``cmd`` to the path that will be executed (for a clear start error early).
    A path with a ``/`` is relative to ``cwd``, where the engine starts."""
    if os.sep in cmd:
        if os.path.isabs(cmd) or cwd is None:
            return cmd
        # the engine starts in ``cwd``: a relative ``cwd`` is not put before it a second
        # time (and the command stays relative, so a moved folder resumes alike)
        return os.path.join(cwd, cmd) if os.path.isabs(cwd) else cmd
    import shutil  # here: it pulls in the compression modules, which `--help` never needs

    found = shutil.which(cmd)
    return found or cmd


def check_keys(tokens: Iterable[tuple[str, str]]) -> None:
    """Raise EngineConfigError for the first key no engine definition accepts."""
    for key, value in tokens:
        if not (key.startswith("option.") or key in LIMIT_KEYS or key in ENGINE_KEYS
                or key in SANDBOX_KEYS):
            raise EngineConfigError(f"unknown engine setting {key!r} (in {key}={value})")


def engine_config_from_tokens(
    tokens: Iterable[tuple[str, str]],
    each: Iterable[tuple[str, str]] = (),
    here: bool = True,
) -> EngineConfig:
    """Build an :class:`EngineConfig` from ``(key, value)`` pairs, ``each`` applied first;
    ``here``: the engine runs on this machine (else ``cmd`` and ``dir`` are kept as given
    for the machine that runs it, which looks them up itself)."""
    settings: dict[str, str] = {}
    options: dict[str, str] = {}
    limit_tokens: dict[str, str] = {}
    sandbox_tokens: dict[str, str] = {}
    for key, value in [*each, *tokens]:
        if key.startswith("option."):
            name = key[len("option.") :]
            if not name:
                raise EngineConfigError(f"{key}={value}: option name is empty")
            if name.lower() == "ugi_variant":  # the referee sets it for each game
                raise EngineConfigError(f"{key}={value}: the game is chosen with -game, "
                                        "not as an engine option")
            # option names are the same in any case (protocol.md 5.2): the engine's own
            # setting replaces -each's, however either spells it, and is sent once
            for spelled in [held for held in options if held.lower() == name.lower()]:
                del options[spelled]
            options[name] = value
        elif key in LIMIT_KEYS:
            limit_tokens[key] = value
        elif key in SANDBOX_KEYS:
            sandbox_tokens[key] = value
        elif key in ENGINE_KEYS:
            settings[key] = value
        else:
            raise EngineConfigError(f"unknown engine setting {key!r} (in {key}={value})")
    proto = settings.get("proto", "ugi")
    if proto.lower() != "ugi":
        raise EngineConfigError(f"proto={proto}: only the ugi protocol is spoken")
    cmd = settings.get("cmd", "")
    if not cmd:
        raise EngineConfigError("engine has no cmd=PATH")
    try:
        args = shlex.split(settings.get("args", ""))
    except ValueError as exc:
        raise EngineConfigError(f"args={settings['args']}: {exc}") from None
    cwd = settings.get("dir") or None
    if cwd is not None and here and not os.path.isdir(cwd):
        raise EngineConfigError(f"dir={cwd}: no such directory")
    name = settings.get("name") or os.path.basename(cmd)
    try:
        limits = parse_limits(limit_tokens) if limit_tokens else None
        sandbox = parse_sandbox(sandbox_tokens) if sandbox_tokens else None
    except (TimeControlError, SandboxError) as exc:
        raise EngineConfigError(f"engine {name}: {exc}") from None
    return EngineConfig(
        name=name,
        argv=[resolve_command(cmd, cwd) if here else cmd, *args],
        cwd=cwd,
        options=options,
        restart=_on_off("restart", settings["restart"]) if "restart" in settings else False,
        limits=limits,
        stderr_path=settings.get("stderr") or None,
        sandbox=sandbox,
    )


def make_names_unique(configs: list[EngineConfig]) -> None:
    """Give engines with the same name a ``-2``, ``-3`` suffix (in place), so results stay
    apart; a suffix another engine already has as its own name is skipped (``a, a, a-2``
    become ``a, a-3, a-2``)."""
    taken = {cfg.name for cfg in configs}
    seen: dict[str, int] = {}
    for cfg in configs:
        count = seen.get(cfg.name, 0) + 1
        seen[cfg.name] = count
        if count > 1:
            while f"{cfg.name}-{count}" in taken:
                count += 1
            seen[cfg.name] = count
            cfg.name = f"{cfg.name}-{count}"
            taken.add(cfg.name)
