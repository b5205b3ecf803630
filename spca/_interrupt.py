"""Ctrl-C while the ``spca`` command is still importing (stdlib only).

Importing numpy and scipy takes a noticeable time; an interrupt then would
print a traceback.  ``spca/__init__`` installs :func:`_interrupted` first
when the process is the command itself (not a library user, and not one of
the command's worker processes, which inherit its ``argv``);
:func:`spca.cli.main` restores Python's handler once it runs.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

_NAMES = ("spca", "spca.exe", "spca-script.py")
_QUIET_TRACKER = "ignore:resource_tracker:UserWarning"


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
    """End the process with one line and status 130 on SIGINT, unless SIGINT
    is ignored (as Python leaves it when started so: ``nohup``, and the fork
    server of the command's Dask workers, which imports the command's main
    module with its ``argv``: its workers printed the line too)."""
    import signal

    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        signal.signal(signal.SIGINT, _interrupted)



@contextlib.contextmanager
def workers_ignore_sigint() -> Iterator[None]:
    """Start the command's Dask worker processes with SIGINT ignored.

    A Ctrl-C at the terminal reaches the whole process group: workers hit
    by it while starting printed tracebacks after "spca: interrupted"
    (issue 28).  Here they are forked from a multiprocessing fork server
    that was started with SIGINT ignored (Python then leaves it ignored, in
    the server and in every child), so only the command sees the Ctrl-C
    and closes the cluster in order.  The command's own handler is ignored
    only while the fork server starts (a fraction of a second).  Without a
    fork server (Windows) nothing changes.
    """
    import multiprocessing
    import signal
    import threading

    if ("forkserver" not in multiprocessing.get_all_start_methods()
            or threading.current_thread() is not threading.main_thread()):
        yield
        return
    from multiprocessing import forkserver

    import dask

    # multiprocessing's resource tracker (started with this interpreter's -W
    # options) warns of the workers' semaphores when the command ends at once
    # on Ctrl-C; it deletes them all the same.
    if _QUIET_TRACKER not in sys.warnoptions:
        sys.warnoptions.append(_QUIET_TRACKER)
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        forkserver.ensure_running()
    finally:
        signal.signal(signal.SIGINT, old)
    with dask.config.set({"distributed.worker.multiprocessing-method": "forkserver"}):
        yield
