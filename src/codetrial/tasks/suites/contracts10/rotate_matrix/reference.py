def rotate_clockwise(matrix: list[list[int]]) -> list[list[int]]:
    """Return a new matrix: matrix rotated 90 degrees clockwise."""
    if not matrix:
        return []
    return [[row[col] for row in reversed(matrix)] for col in range(len(matrix[0]))]
