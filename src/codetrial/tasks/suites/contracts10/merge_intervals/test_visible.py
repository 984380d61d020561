from candidate import merge_intervals


def test_merges_overlapping_intervals():
    assert merge_intervals([[1, 3], [2, 6], [8, 10], [15, 18]]) == [[1, 6], [8, 10], [15, 18]]


def test_sorts_unsorted_input():
    assert merge_intervals([[8, 10], [1, 3], [2, 6]]) == [[1, 6], [8, 10]]


def test_contained_interval_is_absorbed():
    assert merge_intervals([[1, 10], [2, 3]]) == [[1, 10]]
