"""k-sparse components: spca's dspca_cardinality against the baselines at equal k.

The problems and methods are those of ``asv_benchmarks/baselines.py``
(:data:`KSPARSE_CASES`, :data:`KSPARSE_METHODS`): pitprops (k = 5, 10), the
NYT sample's 300 words of largest variance (k = 5), standardised breast
cancer (k = 5, 10), Gaussian and spiked n = 200 (k = 10); forward greedy,
truncated power, GPower-l0 and scikit-learn's SparsePCA (alpha searched once
in ``setup_cache``, then one fit timed).  ``track_certified_ratio`` is
``variance / variance_upper_bound`` of spca's result, NaN while the result
has no such bound.
"""

from __future__ import annotations

import functools

import numpy as np

from ._local import load

_b = load("baselines")
PROBLEMS = [f"{name}-k{k}" for name, k in _b.KSPARSE_CASES]
_problem = functools.cache(_b.ksparse_problem)


def _case(problem: str) -> tuple[str, int]:
    name, k = problem.rsplit("-k", 1)
    return name, int(k)


class KSparse:
    """Time, variance and certified ratio of each method at equal k."""

    param_names = ["problem", "method"]
    params = (PROBLEMS, _b.KSPARSE_METHODS)
    timeout = 900
    # one call per sample, at most 5 samples or 30 s: spca takes about 20 s on
    # the Gaussian problem with the current solver
    number = 1
    repeat = (1, 5, 30.0)

    def setup_cache(self):
        out = {}
        for problem in PROBLEMS:
            name, k = _case(problem)
            try:
                Sigma, X = _problem(name)
            except ImportError:  # scikit-learn missing: those problems are skipped
                continue
            _, spca_res = _b.run_method("spca", Sigma, k)
            out[problem, "spca"] = spca_res
            for method in _b.KSPARSE_METHODS[1:]:
                try:
                    out[problem, method] = _b.run_method(method, Sigma, k, X)[1]
                except ImportError:
                    pass
        return out

    def setup(self, cache, problem, method):
        if (problem, method) not in cache:
            raise NotImplementedError("scikit-learn is not installed")
        name, self.k = _case(problem)
        self.Sigma, self.X = _problem(name)
        self.res = cache[problem, method]
        self.spca = cache[problem, "spca"]
        if method == "sklearn":  # its import (seconds) is not the fit's time
            import sklearn.decomposition  # noqa: F401

    def time_solve(self, cache, problem, method):
        # scikit-learn: one fit at the alpha its search found (the search is not timed)
        _b.run_method(method, self.Sigma, self.k, self.X, alpha=self.res.get("alpha"))

    def track_variance(self, cache, problem, method):
        return self.res["variance"]

    def track_variance_ratio_to_spca(self, cache, problem, method):
        """spca's variance / this method's (>= 1: spca explains at least as much)."""
        return self.spca["variance"] / self.res["variance"]

    def track_cardinality(self, cache, problem, method):
        return self.res["cardinality"]

    def track_certified_ratio(self, cache, problem, method):
        bound = self.spca["bound"]
        return np.nan if bound is None else self.res["variance"] / bound
