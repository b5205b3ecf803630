"""The caller's time limit (spca/_limits.py): the one clock a solver reads."""

import math

import pytest

from spca import _limits
from spca._limits import TimeLimit, check_optimality_gap, check_time_limit


class StubClock:
    """A clock that moves only when told to."""

    def __init__(self, now: float = 100.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def stub(monkeypatch):
    clock = StubClock()
    monkeypatch.setattr(_limits, "clock", clock)
    return clock


def test_deadline_follows_the_stub_clock(stub):
    limit = TimeLimit(2.0)
    assert limit.limited and not limit.expired()
    assert limit.remaining() == 2.0
    stub.now += 1.5
    assert limit.remaining() == pytest.approx(0.5) and not limit.expired()
    assert limit.elapsed() == pytest.approx(1.5)
    stub.now += 0.5
    assert limit.expired() and limit.remaining() == 0.0
    stub.now += 10.0
    assert limit.remaining() == 0.0  # never negative


def test_no_limit_never_expires(stub):
    for limit in (TimeLimit(None), TimeLimit(math.inf), TimeLimit.coerce(None)):
        stub.now += 1e9
        assert not limit.limited and not limit.expired()
        assert limit.remaining() == math.inf
        assert not limit.child(0.5).limited


def test_child_never_outlives_its_parent(stub):
    parent = TimeLimit(10.0)
    stub.now += 4.0
    child = parent.child(0.5)
    assert child.remaining() == pytest.approx(3.0)
    whole = parent.child(2.0)  # asks for more than is left: capped by the parent's
    stub.now += 3.0
    assert child.expired() and not parent.expired()
    assert whole.deadline == pytest.approx(parent.deadline)
    assert TimeLimit.coerce(parent) is parent


@pytest.mark.parametrize("value", [0, -1.0, float("nan")])
def test_time_limit_must_be_positive(value):
    with pytest.raises(ValueError, match=r"time_limit must be a number of seconds > 0, got"):
        check_time_limit(value)


@pytest.mark.parametrize("value", ["10", True, 1j, [1.0]])
def test_time_limit_must_be_a_number(value):
    with pytest.raises(TypeError, match=r"time_limit must be a number of seconds or None"):
        check_time_limit(value)


def test_time_limit_accepts_numbers_and_none():
    assert check_time_limit(None) is None
    assert check_time_limit(3) == 3.0 and isinstance(check_time_limit(3), float)
    assert check_time_limit(math.inf) == math.inf


@pytest.mark.parametrize("value", [0, 1, -0.5, 1.5, float("nan"), float("inf")])
def test_optimality_gap_is_inside_zero_one(value):
    with pytest.raises(ValueError, match=r"optimality_gap must be a relative gap in \(0, 1\)"):
        check_optimality_gap(value)


@pytest.mark.parametrize("value", ["1e-4", False, None])
def test_optimality_gap_types(value):
    if value is None:
        assert check_optimality_gap(None) is None
    else:
        with pytest.raises(TypeError, match="optimality_gap must be a real number"):
            check_optimality_gap(value)


def test_before_ends_earlier_never_in_the_past(stub):
    parent = TimeLimit(10.0)
    stub.now += 2.0
    early = parent.before(3.0)
    assert early.remaining() == pytest.approx(5.0)
    assert early.deadline == pytest.approx(parent.deadline - 3.0)
    gone = parent.before(100.0)  # more than is left: ends now
    assert gone.expired() and gone.remaining() == 0.0
    assert parent.before(0.0) is parent and parent.before(-1.0) is parent
    free = TimeLimit(None)
    assert free.before(5.0) is free and not free.before(5.0).limited


def test_a_callers_limit_plans_to_aim_of_it(stub):
    # entry points plan their work to AIM of the caller's seconds (the rest
    # is kept for what a call does after its last check and for load)
    limit = TimeLimit.caller(10.0)
    assert limit.seconds == 10.0
    assert limit.budget == pytest.approx(_limits.AIM * 10.0)
    assert 0.5 < _limits.AIM < 1.0
    stub.now += _limits.AIM * 10.0 - 1e-9
    assert not limit.expired()
    stub.now += 2e-9
    assert limit.expired() and limit.remaining() == 0.0
    # children and reserves keep to the aimed deadline, not the caller's
    child = TimeLimit.caller(10.0).child(1.0)
    assert child.deadline == pytest.approx(stub.now + _limits.AIM * 10.0)
    free = TimeLimit.caller(None)
    assert not free.limited and free.budget == math.inf


def test_a_stretched_limit_moves_only_the_deadline(stub):
    # a last step planned to more of the caller's seconds than AIM: the same
    # start and seconds, a later deadline, never an earlier one
    limit = TimeLimit.caller(10.0)
    stub.now += 3.0
    reads = []
    real = _limits.clock

    def counting():
        reads.append(1)
        return real()

    _limits.clock = counting
    try:
        longer = limit.stretched(0.95)
    finally:
        _limits.clock = real
    assert not reads  # (no clock read)
    assert longer.start == limit.start and longer.seconds == 10.0
    assert longer.deadline == pytest.approx(limit.start + 9.5)
    assert longer.remaining() == pytest.approx(6.5)
    assert limit.deadline == pytest.approx(limit.start + _limits.AIM * 10.0)  # unchanged
    assert limit.stretched(0.5) is limit  # (never earlier)
    plain = TimeLimit(10.0)
    assert plain.stretched(0.95) is plain  # (its deadline is already later)
    free = TimeLimit.caller(None)
    assert free.stretched(0.95) is free


def test_the_proof_plans_to_proof_aim(stub, monkeypatch):
    # dspca_cardinality's branch and bound gets PROOF_AIM of the caller's
    # limit from the call's start; the heuristic search before it AIM
    import numpy as np

    import spca
    from spca.cardinality import _prove

    seen = []
    real = _prove.branch_and_bound

    def spy(*args, **kwargs):
        seen.append(kwargs["time_limit"])
        return real(*args, **kwargs)

    monkeypatch.setattr(_prove, "branch_and_bound", spy)
    rng = np.random.default_rng(3)
    A = rng.standard_normal((30, 12))
    S = A.T @ A / 30
    start = stub.now
    res = spca.dspca_cardinality(S, 4, optimality_gap=1e-4, time_limit=10.0)
    assert res.status == "optimal"
    assert len(seen) == 1
    assert 0.8 < _prove.PROOF_AIM < 1.0 and _limits.AIM < _prove.PROOF_AIM
    assert seen[0].deadline == pytest.approx(start + _prove.PROOF_AIM * 10.0)
