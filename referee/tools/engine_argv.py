"""Where guti's own options end and the engine's command starts, for ``guti console``
and ``guti check`` (``guti check [--game G] -- ENGINE_CMD [ARGS...]``)."""

from __future__ import annotations


def split_engine_argv(
    argv: list[str], valued: tuple[str, ...] = ("--game",)
) -> tuple[list[str], list[str]]:
    """Split ``[OPTIONS...] -- ENGINE_CMD [ARGS...]`` into (options, engine argv).

    Without ``--`` the engine command starts at the first word that is neither an
    option nor the value of one of the ``valued`` options, so ``guti check ./bot``
    works too; ``--`` is needed only when the engine's own arguments look like ours.
    """
    if "--" in argv:
        cut = argv.index("--")
        return argv[:cut], argv[cut + 1 :]
    i = 0
    while i < len(argv):
        word = argv[i]
        if word in valued:
            i += 2
        elif word.startswith("-"):
            i += 1
        else:
            break
    return argv[:i], argv[i:]
