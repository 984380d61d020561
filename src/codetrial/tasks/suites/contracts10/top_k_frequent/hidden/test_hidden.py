from candidate import top_k_frequent
import pytest


def test_ties_broken_by_ascending_value():
    assert top_k_frequent([5, 5, 2, 2, 9, 9, 1], 3) == [2, 5, 9]


def test_k_larger_than_distinct_count_returns_all():
    assert top_k_frequent([4, 4, 6], 5) == [4, 6]


def test_negative_k_raises_value_error():
    with pytest.raises(ValueError):
        top_k_frequent([1, 2, 3], -1)
