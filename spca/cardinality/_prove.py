"""The hook of :func:`spca.dspca_cardinality`: a heuristic result turned into a proof."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from .. import _limits
from ._search import branch_and_bound

__all__: list[str] = []

#: ``time_limit`` when ``optimality_gap`` is given without one (seconds).
DEFAULT_TIME_LIMIT = 60.0


def check_proof_options(optimality_gap: Any, time_limit: Any) -> tuple[float | None,
                                                                       float | None]:
    """Validate the two options of the search: ``(gap, seconds)``; both ``None``
    when no proof is asked for (``time_limit`` alone is an error)."""
    gap = _limits.check_optimality_gap(optimality_gap)
    seconds = _limits.check_time_limit(time_limit)
    if gap is None:
        if seconds is not None:
            raise ValueError(
                f"time_limit={time_limit!r} limits the branch and bound, which runs only "
                f"when optimality_gap is given (e.g. optimality_gap=1e-4)")
        return None, None
    return gap, DEFAULT_TIME_LIMIT if seconds is None else seconds


def prove(res: Any, cov: Any, optimality_gap: float, time_limit: float | _limits.TimeLimit,
          verbose: bool = False) -> Any:
    """Search from ``res`` (a :class:`spca.CardinalityResult` of the default
    path) until the relative gap is at most ``optimality_gap`` or the time
    limit expires; return ``res`` with the best support, its loadings and
    variance, the certified bound, ``status`` and ``n_nodes``."""
    limit = _limits.TimeLimit.coerce(time_limit)
    k = res.k
    Sigma = cov.block(np.arange(cov.n, dtype=np.intp))
    Sigma[np.diag_indices(cov.n)] = cov.diag
    out = branch_and_bound(Sigma, k, optimality_gap=optimality_gap, time_limit=limit,
                           start=res.support, start_bound=res.variance_upper_bound,
                           lam0=res.bound_lam, verbose=verbose)
    changes: dict[str, Any] = {
        "status": out.status, "n_nodes": out.n_nodes,
        "seconds": res.seconds + out.seconds,
        "variance_upper_bound": min(out.bound, res.variance_upper_bound),
    }
    if out.variance > res.explained_variance and not np.array_equal(out.support, res.support):
        B = Sigma[np.ix_(out.support, out.support)]
        w, V = np.linalg.eigh(B)
        v = V[:, -1]
        if v[np.argmax(np.abs(v))] < 0:
            v = -v
        loadings = np.zeros(cov.n)
        loadings[out.support] = v
        changes.update(support=out.support, loadings=loadings, explained_variance=float(w[-1]),
                       origin="branch and bound")
    gap = (changes["variance_upper_bound"] - changes.get("explained_variance",
                                                        res.explained_variance))
    ub = changes["variance_upper_bound"]
    changes["message"] = (res.message + f"; branch and bound: {out.status} after "
                          f"{out.n_nodes} nodes, {out.seconds:.3g} s, relative gap "
                          f"{max(gap, 0.0) / ub if ub > 0 else math.nan:.2e}")
    return dataclasses.replace(res, **changes)
