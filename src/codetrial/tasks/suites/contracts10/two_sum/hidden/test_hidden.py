from candidate import two_sum
import pytest


def test_equal_values_at_different_indices():
    assert two_sum([3, 3], 6) == (0, 1)


def test_raises_value_error_when_no_pair():
    with pytest.raises(ValueError):
        two_sum([1, 2, 3], 100)


def test_single_element_cannot_pair_with_itself():
    with pytest.raises(ValueError):
        two_sum([5], 10)


def test_does_not_mutate_input():
    nums = [4, 1, 3, 2]
    before = nums[:]
    assert two_sum(nums, 5) == (0, 1)
    assert nums == before
