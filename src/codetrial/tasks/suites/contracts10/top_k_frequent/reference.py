def top_k_frequent(nums: list[int], k: int) -> list[int]:
    """Return the k most frequent values, most frequent first, ties by ascending value."""
    if k < 0:
        raise ValueError("k must not be negative")
    counts = {}
    for value in nums:
        counts[value] = counts.get(value, 0) + 1
    ranked = sorted((-count, value) for value, count in counts.items())
    return [value for _, value in ranked[:k]]
