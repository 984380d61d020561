from candidate import shortest_path


def test_finds_shortest_path_around_wall():
    grid = [[0, 0, 0], [1, 1, 0], [0, 0, 0]]
    assert shortest_path(grid, (0, 0), (2, 0)) == 6


def test_unreachable_goal_returns_minus_one():
    grid = [[0, 1, 0], [0, 1, 0], [0, 1, 0]]
    assert shortest_path(grid, (0, 0), (0, 2)) == -1


def test_start_equal_to_goal_is_zero_steps():
    grid = [[0, 0], [0, 0]]
    assert shortest_path(grid, (1, 1), (1, 1)) == 0
