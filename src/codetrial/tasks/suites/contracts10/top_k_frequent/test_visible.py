from candidate import top_k_frequent


def test_most_frequent_first():
    assert top_k_frequent([1, 1, 1, 2, 2, 3], 2) == [1, 2]


def test_ordered_by_frequency():
    assert top_k_frequent([3, 1, 3, 2, 3, 1], 3) == [3, 1, 2]


def test_k_zero_gives_empty_list():
    assert top_k_frequent([4, 4, 5], 0) == []
