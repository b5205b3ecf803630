"""Ctrl-C while the ``spca`` command is still importing (stdlib only).

Importing numpy and scipy takes a noticeable time; an interrupt then would
print a traceback.  ``spca/__init__`` installs :func:`_interrupted` first
when the process is the command itself (not a library user, and not one of
the command's worker processes, which inherit its ``argv``);
:func:`spca.cli.main` restores Python's handler once it runs.
"""

from __future__ import annotations

import sys

_NAMES = ("spca", "spca.exe", "spca-script.py")


def is_the_command() -> bool:
    """Whether this process runs the ``spca`` command (or ``python -m spca``)."""
    argv = sys.argv
    if not argv:
        return False
    name = argv[0].replace("\\", "/").rsplit("/", 1)[-1]
    if name not in _NAMES and not (argv[0] == "-m" and "spca" in getattr(sys, "orig_argv", ())):
        return False
    from multiprocessing import parent_process

    return parent_process() is None


def _interrupted(signum: int, frame: object) -> None:  # pragma: no cover - subprocess
    import os

    sys.stderr.write("spca: interrupted\n")
    sys.stderr.flush()
    os._exit(130)


def install() -> None:
    """End the process with one line and status 130 on SIGINT."""
    import signal

    signal.signal(signal.SIGINT, _interrupted)
