from __future__ import annotations

from math import comb

import pytest

from codetrial.metrics import bootstrap, ks_for, pass_at_k, pass_at_k_table


@pytest.mark.parametrize(("n", "c", "k"), [(10, 3, 1), (10, 3, 5), (100, 7, 10), (5, 0, 2)])
def test_unbiased_estimator(n: int, c: int, k: int) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(1 - comb(n - c, k) / comb(n, k))


def test_edges() -> None:
    assert pass_at_k(10, 10, 1) == 1.0 and pass_at_k(10, 0, 10) == 0.0
    assert pass_at_k(3, 1, 3) == 1.0
    with pytest.raises(ValueError):
        pass_at_k(3, 1, 4)


def test_k_above_n_is_not_available() -> None:
    table = pass_at_k_table([(5, 1), (5, 5)], [1, 5, 10])
    assert table[10] is None
    assert table[1] is not None and table[1].value == pytest.approx(0.6)


def test_bootstrap_interval_brackets_the_mean_and_is_deterministic() -> None:
    values = [0.0, 1.0] * 20
    estimate = bootstrap(values)
    assert estimate.low < estimate.value == 0.5 < estimate.high
    assert bootstrap(values) == estimate
    assert bootstrap([1.0, 1.0]).low == 1.0


def test_reported_ks() -> None:
    assert ks_for(1) == [1]
    assert ks_for(10) == [1, 2, 5, 10]
    assert ks_for(7) == [1, 2, 5, 7]
