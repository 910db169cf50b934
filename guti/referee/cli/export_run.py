"""What ``guti export DB -pdn F -json F -epd F`` does once :mod:`guti.referee.cli.tournament`
has seen it is not asked for its help: a tournament database's games written as PDN, JSON
or final positions.

Exit status: 0 when written, 2 for a mistake on the command line, a database that cannot
be read as a tournament's or a file that cannot be written (one line on stderr).
"""

from __future__ import annotations

import sqlite3

from guti.faults import OUTPUT_FAULTS
from guti.referee.cli.common import database_and_rest, fail, failed, os_failed, status_stream
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
        with TournamentStore.checked(path) as store, store.snapshot():  # one set of games
            for out, export in (("pdn", export_pdn), ("json", export_json), ("epd", export_epd)):
                if args.has(out):
                    target = args.value(out) or ""
                    stream = status_stream(target)  # before the file is replaced
                    n = export(store, target)
                    print(visible(f"{n} games written to {target}"), flush=True, file=stream)
    except (CliError, StoreError) as exc:
        return failed("export", exc)
    except sqlite3.Error as exc:
        return fail("export", f"{argv[0]}: {exc}")
    except BrokenPipeError:  # the output's reader is gone: exit 141 (guti.cli)
        raise
    except OSError as exc:
        if exc.filename is None and exc.errno in OUTPUT_FAULTS:
            raise  # an output, stdout or a file, could not be written: guti.cli says it
        return os_failed("export", exc)
    return 0
