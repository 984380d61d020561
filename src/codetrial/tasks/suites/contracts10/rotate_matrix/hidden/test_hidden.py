from candidate import rotate_clockwise


def test_rectangular_matrix_changes_shape():
    assert rotate_clockwise([[1, 2, 3], [4, 5, 6]]) == [[4, 1], [5, 2], [6, 3]]


def test_single_row_becomes_column():
    assert rotate_clockwise([[1, 2, 3]]) == [[1], [2], [3]]


def test_single_column_becomes_row():
    assert rotate_clockwise([[1], [2], [3]]) == [[3, 2, 1]]


def test_empty_matrix():
    assert rotate_clockwise([]) == []
