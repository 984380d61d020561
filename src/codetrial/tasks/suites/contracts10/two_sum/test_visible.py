from candidate import two_sum


def test_returns_indices_of_pair():
    assert two_sum([2, 7, 11, 15], 9) == (0, 1)


def test_pair_found_later_in_list():
    assert two_sum([1, 5, 9, 4], 13) == (2, 3)


def test_same_element_not_used_twice():
    assert two_sum([3, 2, 4], 6) == (1, 2)
