def two_sum(nums: list[int], target: int) -> tuple[int, int]:
    """Return indices (i, j), i < j, of two different elements summing to target."""
    first_index = {}
    for j, value in enumerate(nums):
        wanted = target - value
        if wanted in first_index:
            return (first_index[wanted], j)
        if value not in first_index:
            first_index[value] = j
    raise ValueError("no two elements sum to target")
