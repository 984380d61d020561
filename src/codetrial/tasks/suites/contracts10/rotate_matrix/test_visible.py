from candidate import rotate_clockwise


def test_rotates_square_matrix():
    assert rotate_clockwise([[1, 2, 3], [4, 5, 6], [7, 8, 9]]) == [[7, 4, 1], [8, 5, 2], [9, 6, 3]]


def test_does_not_mutate_input():
    m = [[1, 2], [3, 4]]
    before = [row[:] for row in m]
    assert rotate_clockwise(m) == [[3, 1], [4, 2]]
    assert m == before
