"""The environment of a run: versions, CPU, cores, the BLAS in use, the command."""

from __future__ import annotations

import datetime as _dt
import os
import platform
import shlex
import sys
from pathlib import Path

import numpy as np
import scipy
from threadpoolctl import threadpool_info

import spca

_BLAS_KEYS = ("internal_api", "version", "num_threads", "threading_layer", "architecture",
              "filepath")


def _owner(filepath: str | None) -> str | None:
    """The package whose wheel ships a shared library: ``numpy`` for
    ``.../site-packages/numpy.libs/libscipy_openblas64_...so``."""
    if not filepath:
        return None
    for part in Path(filepath).parts[::-1]:
        if part.endswith(".libs"):
            return part[: -len(".libs")]
        if part in ("numpy", "scipy"):
            return part
    return None


def blas_in_use(libraries: list[dict]) -> dict | None:
    """numpy's BLAS among threadpoolctl's libraries: the one loaded from numpy's own
    files, else the one whose version numpy's build configuration names, else the only
    BLAS present.  None when it cannot be told."""
    blas = [b for b in libraries if b.get("user_api") == "blas"]
    mine = [b for b in blas if _owner(b.get("filepath")) == "numpy"]
    if len(mine) == 1:
        return mine[0]
    try:
        version = np.show_config(mode="dicts")["Build Dependencies"]["blas"].get("version")
    except Exception:  # noqa: BLE001 -- older numpy: no dict mode
        version = None
    mine = [b for b in blas if version and b.get("version") == version]
    if len(mine) == 1:
        return mine[0]
    return blas[0] if len(blas) == 1 else None


def describe_blas(b: dict | None) -> str:
    if b is None:
        return "not identified by threadpoolctl"
    return (f"{b['internal_api']} {b['version']} ({b.get('threading_layer') or '-'}, "
            f"{b.get('architecture') or '-'})")


def environment(argv: list[str]) -> dict:
    """Versions, CPU, cores, BLAS and the command line of this run."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    versions = {"spca": spca.__version__, "numpy": np.__version__, "scipy": scipy.__version__,
                "python": platform.python_version()}
    for mod in ("cvxpy", "scs", "matplotlib"):
        try:
            versions[mod] = __import__(mod).__version__
        except Exception:  # noqa: BLE001 -- optional
            versions[mod] = "not installed"
    libraries = threadpool_info()
    numpy_blas = blas_in_use(libraries)
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    return {
        "versions": versions,
        "platform": platform.platform(),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "usable_cores": usable,
        # numpy's BLAS; every library threadpoolctl sees (scipy's, solvers', OpenMP) is
        # kept in "threadpools" of results.json
        "blas": None if numpy_blas is None else {k: numpy_blas.get(k) for k in _BLAS_KEYS},
        "threadpools": [{k: info.get(k) for k in ("user_api", *_BLAS_KEYS)}
                        for info in libraries],
        "command": " ".join(shlex.quote(a) for a in [sys.executable, *argv]),
        "date": _dt.datetime.now().isoformat(timespec="seconds"),
    }
