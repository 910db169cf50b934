"""What ``guti export DB -pdn F -json F -epd F`` does once :mod:`guti.referee.cli.tournament`
has seen it is not asked for its help: a tournament database's games written as PDN, JSON
or final positions.

Exit status: 0 when written, 2 for a mistake on the command line, a database that cannot
be read as a tournament's or a file that cannot be written (one line on stderr).
"""

from __future__ import annotations

import sqlite3

from guti.referee.cli.common import database_and_rest, fail
from guti.referee.config.args import CliError, OptionSpec, parse_cli
from guti.referee.config.outputs import check_outputs
from guti.referee.process.text import visible
from guti.referee.storage.export import export_epd, export_json, export_pdn
from guti.referee.storage.store import StoreError, TournamentStore


def export_command(argv: list[str], options: list[OptionSpec]) -> int:
    """``guti export DB -pdn FILE -json FILE -epd FILE`` (its help aside), ``options``
    being its option list."""
    try:
        path, rest = database_and_rest("export", argv)
        args = parse_cli(rest, options)
        if not (args.has("pdn") or args.has("json") or args.has("epd")):
            raise CliError("nothing to do: give -pdn FILE, -json FILE and/or -epd FILE")
        check_outputs([("database", path), *((f"-{out}", args.value(out))
                                              for out in ("pdn", "json", "epd"))])
        with TournamentStore.checked(path) as store:
            if args.has("pdn"):
                n = export_pdn(store, args.value("pdn") or "")
                print(visible(f"{n} games written to {args.value('pdn')}"), flush=True)
            if args.has("json"):
                n = export_json(store, args.value("json") or "")
                print(visible(f"{n} games written to {args.value('json')}"), flush=True)
            if args.has("epd"):
                n = export_epd(store, args.value("epd") or "")
                print(visible(f"{n} games written to {args.value('epd')}"), flush=True)
    except (CliError, StoreError) as exc:
        return fail("export", str(exc))
    except sqlite3.Error as exc:
        return fail("export", f"{argv[0]}: {exc}")
    except BrokenPipeError:  # the output's reader is gone: exit 141 (guti.cli)
        raise
    except OSError as exc:
        return fail("export", f"{exc.filename or ''}: {exc.strerror or exc}")
    return 0
