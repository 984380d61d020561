from candidate import merge_intervals


def test_touching_intervals_merge():
    assert merge_intervals([[8, 10], [10, 12]]) == [[8, 12]]


def test_does_not_mutate_input():
    x = [[1, 3], [2, 6], [8, 10], [10, 12], [15, 18]]
    before = [row[:] for row in x]
    assert merge_intervals(x) == [[1, 6], [8, 12], [15, 18]]
    assert x == before


def test_returns_new_inner_lists():
    x = [[5, 7], [1, 2]]
    result = merge_intervals(x)
    assert all(row is not original for row in result for original in x)


def test_empty_input_gives_empty_list():
    assert merge_intervals([]) == []


def test_an_interval_inside_the_last_merged_one_keeps_its_end():
    assert merge_intervals([[1, 2], [3, 10], [4, 6]]) == [[1, 2], [3, 10]]
