from candidate import moving_average
import pytest


def test_window_equal_to_length_gives_one_value():
    assert moving_average([1.0, 2.0, 3.0, 4.0], 4) == pytest.approx([2.5])


def test_window_larger_than_length_raises_value_error():
    with pytest.raises(ValueError):
        moving_average([1.0, 2.0, 3.0], 4)


def test_negative_window_raises_value_error():
    with pytest.raises(ValueError):
        moving_average([1.0, 2.0, 3.0], -1)


def test_window_of_one_gives_the_values():
    assert moving_average([1.0, 2.5, 4.0], 1) == pytest.approx([1.0, 2.5, 4.0])
