"""The hard benchmark family's cached lams (``asv_benchmarks/hard_problems.py``).

The lams in ``hard_lams.json`` are found once by a proxy on seeded
matrices; this checks that the cache covers every case and still matches
the generator (a changed generator would silently make them stale).
"""

import importlib.util
import json
from pathlib import Path

import pytest

from spca.datasets import make_correlation_few_samples

_PATH = Path(__file__).resolve().parents[1] / "asv_benchmarks" / "hard_problems.py"
_spec = importlib.util.spec_from_file_location("spca_bench_hard_problems", _PATH)
hp = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hp)


def test_cache_covers_every_case():
    cached = json.loads(hp.LAMS_PATH.read_text())
    for family, n, k in hp.cases():
        entry = cached[f"{family}-{n}-{k}"]
        assert entry["target"] == k
        assert abs(entry["proxy_cardinality"] - k) <= max(1, k // 10)


def test_cached_lam_matches_the_generator():
    # recompute one case of n = 500 (half a second) and compare with the cache
    lam, card = hp.find_lam(hp.matrix("correlation", 500), 50)
    assert card == 50
    # the bisection stops at the first lam with the target: equal up to rounding
    assert lam == pytest.approx(hp.lam_for("correlation", 500, 50), rel=1e-6)


def test_proxy_finds_the_target_on_a_small_problem():
    R = make_correlation_few_samples(120, 32, random_state=1)
    for target in (5, 20):
        lam, card = hp.find_lam(R, target)
        assert card == target
        assert 0 < lam < 1
