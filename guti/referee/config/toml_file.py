"""A TOML tournament file read into the options model (:class:`GivenOptions`).

Every top-level key is the option of the same name (``rounds = 2`` means ``-rounds 2``),
tables are ``key=value`` options (``[each] tc = "5+0.05"`` is ``-each tc=5+0.05``) and
``[[engine]]`` entries are ``-engine`` definitions; values keep their TOML types. So
there is one meaning for every setting, whichever way it was given, and options given
on the command line override the file's, option by option (``-engine`` replaces the
file's whole engine list). An option whose value may be left out takes ``true`` for that
(``use-affinity = true`` is ``-use-affinity``, ``"0-3"`` the list).

TOML-only engine keys, for bundles of engines that may not all be installable on every
machine (reading the file only notes them; :mod:`guti.referee.config.engine_build` sees
to them, as a step of its own):

- ``requires = ["node"]``: programs that must be on ``PATH``; if one is missing the
  engine is skipped with one line saying why;
- ``build = ["make", "-C", "c"]``: a command run (no shell, in the engine's ``dir``,
  else the file's folder) before the tournament; if it fails the engine is skipped;
- ``upload = "engines/a"``: on a cluster, a folder (relative to the TOML file's) sent to
  every worker before the first game; paths under it (``cmd``, ``dir``, ``args``, the
  build's folder) are the worker's copy there, so ``build`` builds it on the worker;
- ``cmd = "{python}"`` is the Python running guti (on a cluster, the worker's); relative ``cmd`` paths with a ``/``
  and ``dir`` are relative to the TOML file's folder;
- ``args`` may be a list (joined with POSIX quoting) or a string;
- ``options = { Level = 5 }`` is ``option.Level=5``.

The file must be a regular file of at most :data:`MAX_CONFIG_BYTES` (a device such as
``/dev/zero`` would otherwise be read until memory runs out, a FIFO wait for a writer).
Every key has one TOML type (:mod:`guti.referee.config.toml_types`: ``games = 10``, not
``"10"``; ``restart = true``, not ``"yes"``). Every mistake is one line naming the file and
the key (``t.toml: rounds: expected a whole number, got a list``).
"""

from __future__ import annotations

import os
import shlex
import sys
import tomllib
from typing import Any

from guti.referee.config.args import CliError, Kind, OptionSpec, did_you_mean, may_be_empty
from guti.referee.config.given import EngineEntry, GivenOptions, GivenValue, Scalar, as_text
from guti.referee.config.toml_types import (
    ENGINE_KEY_TYPES,
    OPTION_TYPES,
    TABLE_KEY_TYPES,
    check_type,
    described,
)
from guti.referee.game.output_paths import kind

#: The largest configuration file read: a tournament's settings take a few kilobytes.
MAX_CONFIG_BYTES = 1 << 20


def read_toml(path: str, specs: list[OptionSpec]) -> GivenOptions:
    """The options the TOML file ``path`` gives, checked against ``specs`` (the options of
    the command it is for). Nothing is run: engines' builds and requirements are noted."""
    found = kind(path)
    if found not in (None, "file"):  # None: open() says what is wrong
        raise CliError(f"config {path}: is a {found}, not a file")
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_CONFIG_BYTES + 1)
        if len(raw) > MAX_CONFIG_BYTES:
            raise CliError(f"config {path}: larger than {MAX_CONFIG_BYTES >> 20} MiB "
                           "(a configuration file is small)")
        data = tomllib.loads(raw.decode("utf-8"))
    except OSError as exc:
        raise CliError(f"config {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise CliError(f"config {path}: {exc}") from None
    except UnicodeDecodeError as exc:
        raise CliError(f"config {path}: not UTF-8 text (byte {exc.start})") from None
    base = os.path.dirname(os.path.abspath(path))
    known = {spec.name: spec for spec in specs}
    values: dict[str, GivenValue] = {}
    engines: tuple[EngineEntry, ...] = ()
    for key, value in data.items():
        spec = known.get(key)
        where = f"{path}: {key}"
        if spec is None or key == "config":
            hint = did_you_mean(key, (k for k in known if k != "config"))
            raise CliError(f"{path}: unknown setting {key!r}{hint}")
        if key == "engine":
            engines = _engines(value, base, where)
            continue
        given = _option(spec, value, base, where)
        if given is not None:
            values[key] = given
    return GivenOptions(values, engines)


def _option(spec: OptionSpec, value: Any, base: str, where: str) -> GivenValue | None:
    """The option ``spec`` as the file gives it (None: a flag set to false)."""
    if spec.kind is Kind.FLAG or (spec.kind is Kind.OPTIONAL and isinstance(value, bool)):
        if not isinstance(value, bool):
            raise CliError(f"{where}: expected true or false, got {described(value)}")
        if not value:
            return None
        return GivenValue(where, "" if spec.kind is Kind.OPTIONAL else True)
    if spec.kind is not Kind.TOKENS:
        check_type(value, OPTION_TYPES.get(spec.name), where)
        return GivenValue(where, _filled(_scalar(value, where), where))
    if isinstance(value, str) and spec.bare_key is not None:
        value = {spec.bare_key: value}  # pdnout = "out.pdn" == -pdnout file=out.pdn
    if not isinstance(value, dict):
        raise CliError(f"{where}: expected a table of key = value")
    if not value:
        raise CliError(f"{where}: needs key = value settings")
    if spec.name == "each" and isinstance(value.get("limits"), dict):  # limits.memory = "1G"
        value = {**{k: v for k, v in value.items() if k != "limits"},
                 **{f"limits.{k}": v for k, v in value["limits"].items()}}
    pairs = []
    for key, item in value.items():
        if spec.keys is not None and key not in spec.keys:
            raise CliError(f"{where}: unknown key {key!r} (allowed: {', '.join(sorted(spec.keys))})")
        check_type(item, TABLE_KEY_TYPES.get(spec.name, {}).get(key), f"{where}.{key}")
        scalar = _scalar(item, f"{where}.{key}")
        if not may_be_empty(key):
            _filled(scalar, f"{where}.{key}")
        if spec.name == "openings" and key == "file" and not as_text(scalar).startswith("random:"):
            scalar = os.path.join(base, as_text(scalar))
        pairs.append((key, scalar))
    return GivenValue(where, pairs=tuple(pairs))


def _engines(value: Any, base: str, where: str) -> tuple[EngineEntry, ...]:
    if not isinstance(value, list):
        raise CliError(f"{where}: use [[engine]] tables")
    entries = []
    for n, entry in enumerate(value, 1):
        if not isinstance(entry, dict):
            raise CliError(f"{where} #{n}: expected a table")
        entries.append(_engine(entry, base, f"{where} #{n}"))
    return tuple(entries)


def _engine(entry: dict[str, Any], base: str, where: str) -> EngineEntry:
    """One ``[[engine]]`` table: its ``-engine`` settings, requirements and build."""
    # as the engine will be named: without name=, its program's file name
    program = str(entry.get("cmd") or "").replace("{python}", sys.executable)
    name = str(entry.get("name") or os.path.basename(program) or where)
    requires = _words(entry.get("requires", []), f"{where}.requires")
    build = entry.get("build")
    command: list[str] = []
    if build is not None:
        _words(build, f"{where}.build")
        if isinstance(build, list):
            command = [_text(w, f"{where}.build") for w in build]
        elif build:
            try:
                command = shlex.split(_text(build, f"{where}.build"))
            except ValueError as exc:  # No closing quotation, ...
                raise CliError(f"{where}.build: {build!r}: {exc}") from None
    settings: list[tuple[str, str]] = []
    for key, value in entry.items():
        if isinstance(value, str) and not may_be_empty(key):
            _filled(value, f"{where}.{key}")
        if key in ("requires", "build", "upload"):
            continue
        if key == "options":
            if not isinstance(value, dict):
                raise CliError(f"{where}.options: expected a table such as {{ Hash = 16 }}")
            settings += [(f"option.{k}", _text(v, f"{where}.options.{k}")) for k, v in value.items()]
        elif key == "limits" and isinstance(value, dict):  # limits.memory = "512M" unquoted
            for name, item in value.items():
                check_type(item, ENGINE_KEY_TYPES.get(f"limits.{name}"), f"{where}.limits.{name}")
                settings.append((f"limits.{name}", _text(item, f"{where}.limits.{name}")))
        elif key == "args":
            text = (shlex.join(_text(w, f"{where}.args") for w in value)
                    if isinstance(value, list) else _text(value, f"{where}.args"))
            settings.append(("args", text))
        elif key == "cmd":
            check_type(value, ENGINE_KEY_TYPES["cmd"], f"{where}.cmd")
            cmd = _text(value, f"{where}.cmd").replace("{python}", sys.executable)
            if os.sep in cmd and not os.path.isabs(cmd) and "dir" not in entry:
                cmd = os.path.join(base, cmd)
            settings.append(("cmd", cmd))
        elif key == "dir":
            check_type(value, ENGINE_KEY_TYPES["dir"], f"{where}.dir")
            settings.append(("dir", os.path.join(base, _text(value, f"{where}.dir"))))
        else:
            check_type(value, ENGINE_KEY_TYPES.get(key), f"{where}.{key}")
            settings.append((key, _text(value, f"{where}.{key}")))
    folder = os.path.join(base, str(entry["dir"])) if "dir" in entry else base
    upload = entry.get("upload")
    sent = os.path.normpath(os.path.join(base, _text(upload, f"{where}.upload"))) if (
        upload is not None) else ""
    return EngineEntry(where, tuple(settings), name, tuple(requires), tuple(command), folder,
                       sent)


def _filled(value: Scalar, where: str) -> Scalar:
    """``value``, unless it is an empty (or blank) string: given, it must say something
    (``db = ""`` is not "the default database")."""
    if isinstance(value, str) and not value.strip():
        raise CliError(f"{where}: empty string (give a value, or leave the key out)")
    return value


def _scalar(value: Any, where: str) -> Scalar:
    if isinstance(value, bool | int | float | str):
        return value
    raise CliError(f"{where}: expected a string or number, got {described(value)}")


def _text(value: Any, where: str) -> str:
    """A value as text (``true``/``false`` for booleans: protocol.md's check options)."""
    return as_text(_scalar(value, where))


def _words(value: Any, where: str) -> list[str]:
    """A string, or a list of strings (``requires``, ``build``)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(w, str) for w in value):
        return value
    raise CliError(f"{where}: expected a string or a list of strings, got {described(value)}")
