"""Start a program inside its limits: ``python limited.py [OPTIONS] -- ARGV``.

The referee starts a confined engine through this tiny program instead of the engine
itself, so that no Python code runs in the referee between fork and exec (its engines
are spawned with ``vfork``). It runs alone, before the engine exists, and then execs
it, so the engine and everything it starts inherit what it set up:

- ``--cgroup DIR`` (repeatable): join that cgroup (write its own pid to ``cgroup.procs``);
- ``--address-space BYTES``: ``RLIMIT_AS``, the memory limit when there is no cgroup;
- ``--processes N``: ``RLIMIT_NPROC``, the process limit when there is no cgroup;
- ``--network-off``: a network namespace of its own (only a loopback that is down), by
  ``unshare(CLONE_NEWNET)``, inside a new user namespace when not root;
- ``--bwrap PATH`` (with ``--writable DIR``, optional): files private: the program is run
  by bubblewrap with a read-only view of the whole system, a fresh ``/dev``, an empty
  private ``/tmp`` and only ``DIR`` writable (bubblewrap then also makes the network
  namespace for ``--network-off``).

It imports nothing of guti (it is run as a script with ``python -I -S``: tens of
milliseconds). Anything it cannot do ends it with one line on stderr saying what and
status 126 (127: the program is not found), which the referee reports as the engine's
start failure.
"""

from __future__ import annotations

import ctypes
import os
import resource
import sys

_CLONE_NEWNET = 0x40000000
_CLONE_NEWUSER = 0x10000000


def _fail(message: str, status: int = 126) -> None:
    sys.stderr.write(f"guti limits: {message}\n")
    sys.stderr.flush()
    os._exit(status)


def _unshare(flags: int) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    return 0 if libc.unshare(flags) == 0 else ctypes.get_errno()


def _network_off() -> None:
    """A network namespace of its own; as non-root first a user namespace mapping the
    caller's own uid and gid, so the engine keeps its identity and files."""
    if os.geteuid() == 0 and _unshare(_CLONE_NEWNET) == 0:
        return
    uid, gid = os.geteuid(), os.getegid()
    err = _unshare(_CLONE_NEWUSER | _CLONE_NEWNET)
    if err:
        _fail(f"limits.network=off: cannot make a network namespace ({os.strerror(err)})")
    try:
        for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"),
                           ("gid_map", f"{gid} {gid} 1")):
            with open(f"/proc/self/{name}", "w") as fh:
                fh.write(text)
    except OSError as exc:
        _fail(f"limits.network=off: cannot map the user namespace ({exc.strerror})")


def _in_bubblewrap(bwrap: str, writable: list[str], network_off: bool,
                   argv: list[str]) -> list[str]:
    """The argv running ``argv`` in bubblewrap: everything read-only but ``writable``, and
    ``/tmp`` an empty one of its own, except that the folders of ``/tmp`` the program runs
    from (its executable, the files its arguments name, the working folder) stay visible,
    read-only: a program installed under ``/tmp`` still starts."""
    mounts = ["--ro-bind", "/", "/", "--dev", "/dev", "--tmpfs", "/tmp"]
    for folder in _tmp_folders_used(argv):
        mounts += ["--ro-bind", folder, folder]
    for folder in writable:
        mounts += ["--bind", folder, folder]
    unshare = ["--unshare-net"] if network_off else []
    return [bwrap, *mounts, *unshare, "--die-with-parent", "--", *argv]


def _tmp_folders_used(argv: list[str]) -> list[str]:
    """The top-level folders of ``/tmp`` that hold the program, a file its arguments name or
    the working folder (each once, in order)."""
    found: list[str] = []
    for name in [*argv, os.getcwd()]:
        if not os.path.exists(name):
            continue
        for path in {os.path.abspath(name), os.path.realpath(name)}:
            parts = path.split(os.sep)
            if len(parts) > 2 and parts[1] == "tmp" and parts[2]:
                top = os.sep.join(parts[:3])
                if top not in found:
                    found.append(top)
    return found


def main(args: list[str]) -> None:
    """Apply the options in ``args`` (up to ``--``), then exec what follows."""
    if "--" not in args:
        _fail("usage: limited.py [OPTIONS] -- ARGV", 2)
    cut = args.index("--")
    options, argv = args[:cut], args[cut + 1:]
    if not argv:
        _fail("no program to start", 2)
    network_off = False
    bwrap: str | None = None
    writable: list[str] = []
    i = 0
    while i < len(options):
        flag = options[i]
        if flag == "--network-off":
            network_off = True
            i += 1
            continue
        if i + 1 >= len(options):
            _fail(f"{flag} needs a value", 2)
        value = options[i + 1]
        i += 2
        try:
            if flag == "--bwrap":
                bwrap = value
            elif flag == "--writable":
                writable.append(value)
            elif flag == "--cgroup":
                with open(os.path.join(value, "cgroup.procs"), "w") as fh:
                    fh.write(str(os.getpid()))
            elif flag == "--address-space":
                resource.setrlimit(resource.RLIMIT_AS, (int(value), int(value)))
            elif flag == "--processes":
                resource.setrlimit(resource.RLIMIT_NPROC, (int(value), int(value)))
            else:
                _fail(f"unknown option {flag}", 2)
        except (OSError, ValueError) as exc:
            _fail(f"{flag} {value}: {getattr(exc, 'strerror', None) or exc}")
    if bwrap is not None:
        argv = _in_bubblewrap(bwrap, writable, network_off, argv)
    elif network_off:
        _network_off()
    try:
        if os.sep in argv[0]:
            os.execv(argv[0], argv)
        os.execvp(argv[0], argv)
    except OSError as exc:
        _fail(f"cannot start {argv[0]}: {exc.strerror}",
              127 if isinstance(exc, FileNotFoundError) else 126)


if __name__ == "__main__":
    main(sys.argv[1:])
