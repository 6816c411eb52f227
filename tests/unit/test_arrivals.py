"""Arrival processes: seeded, the right mean rate and burstiness, ramp-up, time scaling."""

import numpy as np
import pytest

from pipeline.plan.arrivals import scaled_trace, synthetic


def gaps(offsets):
    return np.diff(offsets)


def test_trace_time_scale():
    assert scaled_trace([0.0, 1.0, 4.0], 0.5) == [0.0, 0.5, 2.0]
    with pytest.raises(ValueError, match="time_scale"):
        scaled_trace([0.0], 0)


def test_constant_rate_is_evenly_spaced():
    assert synthetic(5, 4.0, "constant", seed=1) == [0.0, 0.25, 0.5, 0.75, 1.0]


@pytest.mark.parametrize(
    ("process", "burstiness", "cv"), [("poisson", 1.0, 1.0), ("gamma", 0.25, 2.0), ("gamma", 4.0, 0.5)]
)
def test_mean_rate_and_coefficient_of_variation(process, burstiness, cv):
    offsets = synthetic(40_001, 50.0, process, seed=3, burstiness=burstiness)
    assert 40_000 / offsets[-1] == pytest.approx(50.0, rel=0.03)
    g = gaps(offsets)
    assert g.std() / g.mean() == pytest.approx(cv, rel=0.05)  # gamma CV = 1/√shape


def test_same_seed_same_offsets_other_seed_other_offsets():
    assert synthetic(100, 10.0, "poisson", seed=7) == synthetic(100, 10.0, "poisson", seed=7)
    assert synthetic(100, 10.0, "poisson", seed=7) != synthetic(100, 10.0, "poisson", seed=8)


def test_ramp_up_starts_slow_and_reaches_the_full_rate():
    offsets = synthetic(1001, 10.0, "constant", seed=0, ramp_up_s=20.0)
    assert offsets[100] == pytest.approx(20.0)  # 100 arrivals in the 20 s ramp: half the full-rate count
    late = gaps(offsets[200:])
    assert late == pytest.approx(np.full(len(late), 0.1))
    assert offsets[1] - offsets[0] > 0.1 * 10


def test_bad_parameters_are_named():
    with pytest.raises(ValueError, match="unknown arrival process 'zipf'"):
        synthetic(3, 1.0, "zipf", seed=0)
    with pytest.raises(ValueError, match="rate_per_s"):
        synthetic(3, 0.0, "poisson", seed=0)
