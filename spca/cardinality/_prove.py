"""The hook of :func:`spca.dspca_cardinality`: a heuristic result turned into a proof."""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import _limits
from .._bca import ConvergenceWarning, _blas_threads
from .._certificate import bound_margin
from ._bounds import feature_bounds
from ._search import branch_and_bound

__all__: list[str] = []

#: ``time_limit`` when ``optimality_gap`` is given without one (seconds).
DEFAULT_TIME_LIMIT = 60.0
#: Share of the caller's ``time_limit`` (from the call's start) that the proof
#: of :func:`spca.dspca_cardinality` plans to, instead of ``_limits.AIM``: the
#: branch and bound checks the limit at every node and after it only forms
#: the answer (one ``k x k`` eigensolve), so it may run closer to the limit
#: than the entry points whose later work ``AIM`` keeps time for (measured:
#: the NYT sample's 300 words of largest variance, raw, k = 19, proven in
#: 4,335 nodes / 50 s; with ``time_limit=60`` planned to AIM = 0.8 it
#: stopped after 48 s at a gap of 0.13-0.21%).
PROOF_AIM = 0.95
# From this many features on, the (k - 1)-sparse certificate is computed for
# the probing of the root (one more cardinality search), within PROBE_SHARE of
# the time left (measured: the NYT sample's 300 words of largest variance,
# raw, k = 18, 60 s of CPU: with 0.3 the branch and bound at k - 1 = 17 ran
# out of time and the probing dropped 1 feature, gap 0.34% after 60 s; with
# 0.4 it finished, 1,033 nodes / 6.1 s, and left 141 of 300 features: proven
# in 30-36 s, the search at k = 18 itself 14.4 s).
PROBE_FROM = 200
# ... which is pushed below the incumbent by this margin, by a branch and
# bound at k - 1 to this gap when the certificate is not enough.
PROBE_MARGIN = 0.01
PROBE_GAP = 1e-3
PROBE_SHARE = 0.4
# The branch and bound at k - 1 is skipped when even its best outcome (a bound
# PROBE_GAP above the (k - 1)-sparse variance found) would leave more than
# this fraction of the features to the search (measured: the NYT sample's 300
# words of largest variance standardised, k = 20: the probe took its whole
# share, 18 of 60 s, and dropped none; at best it could drop a third).
PROBE_KEEP = 0.5
# ... and so is it when the branch and bound at k - 1 could not be probed
# itself: when even a perfect bound at k - 2 would leave it more than
# PROBE_KEEP of the features (at the caller's gap), it is a search over
# (nearly) the features of the one at k, as costly as the search it is
# meant to shorten (measured: the NYT sample's 300 words of largest
# variance, raw, k = 20, whose level 19 keeps 51%: gap after 60 s of CPU
# 2.01% with the probing, 1.37% without).


def check_proof_options(optimality_gap: Any, time_limit: Any) -> tuple[float | None,
                                                                       float | None]:
    """Validate the two options of a k-sparse search: ``(gap, seconds)``.

    ``gap`` is ``None`` when no proof is asked for; ``seconds`` is the
    caller's ``time_limit`` (``None``: no limit), or ``DEFAULT_TIME_LIMIT``
    for a proof asked for without one.  ``time_limit`` alone limits the
    heuristic search (and the relaxation's solves)."""
    gap = _limits.check_optimality_gap(optimality_gap)
    seconds = _limits.check_time_limit(time_limit)
    if gap is not None and seconds is None:
        seconds = DEFAULT_TIME_LIMIT
    return gap, seconds


def _bound_below(Sigma: np.ndarray, j: int, target: float, limit: _limits.TimeLimit,
                 search: Callable[..., Any],
                 worth: Callable[[Any], bool] | None = None) -> float:
    """A certified bound on the best ``j``-sparse variance, pushed below
    ``target`` if it can be: the certificate of :func:`spca.dspca_cardinality`
    at ``j``, else a branch and bound at ``j`` (to the gap PROBE_GAP, probed
    with the bound at ``j - 1``, recursively).  ``search`` is
    :func:`spca.dspca_cardinality` (passed in: spca._path imports this module),
    run within the time ``limit`` leaves (its own warning, if the limit ends
    it, is not the caller's: the proof's status says so).  ``worth`` (given
    the result of ``search`` at ``j``: whether the bound a branch and bound
    at ``j`` could at best prove would help the caller) skips the branch and
    bound when it would not."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = search(Sigma, j, time_limit=max(limit.remaining(), 1e-9)
                     if limit.limited else None)
    ub = res.variance_upper_bound
    if ub < target * (1.0 - PROBE_MARGIN) or j == 1 or limit.expired():
        return ub
    if worth is not None and not worth(res):
        return ub
    beta = _bound_below(Sigma, j - 1, res.explained_variance, limit, search)
    out = branch_and_bound(Sigma, j, optimality_gap=PROBE_GAP, time_limit=limit,
                           start=res.support, start_bound=ub, lam0=res.bound_lam, below=beta)
    if out.status == _limits.STATUS_INTERRUPTED:
        raise KeyboardInterrupt  # (Ctrl-C ends the whole proof, not this step)
    return min(ub, bound_margin(out.bound, j))


def prove(res: Any, cov: Any, optimality_gap: float, time_limit: float | _limits.TimeLimit,
          verbose: bool = False, *, search: Callable[..., Any]) -> Any:
    """Search from ``res`` (a :class:`spca.CardinalityResult` of the default
    path) until the relative gap is at most ``optimality_gap`` or the time
    limit expires; return ``res`` with the best support, its loadings and
    variance, the certified bound, ``status`` and ``n_nodes``.  ``search`` is
    :func:`spca.dspca_cardinality`, for the certificates of the probing.

    BLAS runs on one thread meanwhile, as in the relaxation's solves: the
    nodes' products and factorisations are of at most a few hundred rows
    (measured: the NYT sample's 300 words of largest variance, raw, k = 20,
    ``time_limit=60``, on the 2-core machine: proven in 5,435 nodes / 55 s
    on one BLAS thread; on two, 2,032 nodes in 57 s, gap 5.1%, twice the
    CPU time)."""
    with _blas_threads(cov.n):
        return _prove(res, cov, optimality_gap, time_limit, verbose, search)


def _prove(res: Any, cov: Any, optimality_gap: float,
           time_limit: float | _limits.TimeLimit, verbose: bool,
           search: Callable[..., Any]) -> Any:
    limit = _limits.TimeLimit.coerce(time_limit)
    k = res.k
    Sigma = cov.block(np.arange(cov.n, dtype=np.intp))
    Sigma[np.diag_indices(cov.n)] = cov.diag
    beta = math.inf
    if cov.n > PROBE_FROM and k > 1:
        # a certified bound on the (k - 1)-sparse variance lets the probing
        # drop the features whose rows cannot lift it to the incumbent
        found: dict[int, Any] = {}
        probe = limit.child(PROBE_SHARE)

        def search_once(S: Any, j: int, **options: Any) -> Any:
            # (the probing's searches, each once: worth's at k - 2 is the
            # chain's own)
            if j not in found:
                found[j] = search(S, j, **options)
            return found[j]

        def cuts(j: int, var_j: float, var_below: float, gap: float) -> bool:
            # whether a bound PROBE_GAP above the (j - 1)-sparse variance
            # var_below leaves at most PROBE_KEEP of the features to a search
            # at j whose best variance is var_j
            kept = feature_bounds(Sigma, j, var_below * (1.0 + PROBE_GAP)) > var_j / (1.0 - gap)
            return float(kept.mean()) <= PROBE_KEEP

        def worth(below: Any) -> bool:
            var = below.explained_variance
            if not cuts(k, res.explained_variance, var, optimality_gap):
                return False
            if k - 1 == 1:
                return True
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                two = search_once(Sigma, k - 2, time_limit=max(probe.remaining(), 1e-9)
                                  if probe.limited else None)
            return cuts(k - 1, var, two.explained_variance, optimality_gap)

        try:
            beta = _bound_below(Sigma, k - 1, res.explained_variance,
                                probe, search_once, worth)
        except KeyboardInterrupt:
            return dataclasses.replace(
                res, status=_limits.STATUS_INTERRUPTED, n_nodes=0,
                message=res.message + "; branch and bound: interrupted while probing")
    out = branch_and_bound(Sigma, k, optimality_gap=optimality_gap, time_limit=limit,
                           start=res.support, start_bound=res.variance_upper_bound,
                           lam0=res.bound_lam, below=beta, verbose=verbose)
    changes: dict[str, Any] = {
        "status": out.status, "n_nodes": out.n_nodes,
        "seconds": res.seconds + out.seconds,
        # the node bounds carry the rounding margin of the default path's
        # bound (spca._certificate.bound_margin) before they are compared
        "variance_upper_bound": min(bound_margin(out.bound, k), res.variance_upper_bound),
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
    # a bound is never below the variance it certifies (rounding)
    variance = changes.get("explained_variance", res.explained_variance)
    changes["variance_upper_bound"] = max(changes["variance_upper_bound"], variance)
    gap = changes["variance_upper_bound"] - variance
    ub = changes["variance_upper_bound"]
    changes["message"] = (res.message + f"; branch and bound: {out.status} after "
                          f"{out.n_nodes} nodes, {out.seconds:.3g} s, relative gap "
                          f"{max(gap, 0.0) / ub if ub > 0 else math.nan:.2e}")
    return dataclasses.replace(res, **changes)
