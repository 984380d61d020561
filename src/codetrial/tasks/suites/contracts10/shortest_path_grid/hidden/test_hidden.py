from candidate import shortest_path
import pytest


def test_blocked_start_raises_value_error():
    with pytest.raises(ValueError):
        shortest_path([[1, 0], [0, 0]], (0, 0), (1, 1))


def test_blocked_goal_raises_value_error():
    with pytest.raises(ValueError):
        shortest_path([[0, 0], [0, 1]], (0, 0), (1, 1))


def test_negative_index_is_out_of_bounds():
    with pytest.raises(ValueError):
        shortest_path([[0, 0], [0, 0]], (-1, 0), (1, 1))


def test_does_not_mutate_grid():
    grid = [[0, 0, 0], [0, 1, 0], [0, 0, 0]]
    before = [row[:] for row in grid]
    assert shortest_path(grid, (0, 0), (2, 2)) == 4
    assert grid == before


def test_a_path_that_must_go_up():
    grid = [[0, 0, 0], [0, 1, 0], [0, 1, 0]]
    assert shortest_path(grid, (2, 0), (2, 2)) == 6


def test_a_single_row():
    assert shortest_path([[0, 0, 0]], (0, 0), (0, 2)) == 2


def test_the_first_index_past_each_edge_is_out_of_bounds():
    for start in ((2, 0), (0, 2), (0, -1)):
        with pytest.raises(ValueError):
            shortest_path([[0, 0], [0, 0]], start, (1, 1))
