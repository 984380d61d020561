from candidate import moving_average
import pytest


def test_basic_window():
    assert moving_average([1, 2, 3, 4, 5], 3) == pytest.approx([2.0, 3.0, 4.0])


def test_float_values():
    assert moving_average([0.1, 0.2, 0.3], 2) == pytest.approx([0.15, 0.25])


def test_window_zero_raises_value_error():
    with pytest.raises(ValueError):
        moving_average([1.0, 2.0], 0)
