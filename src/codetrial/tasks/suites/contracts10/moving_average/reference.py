def moving_average(values: list[float], window: int) -> list[float]:
    """Return the means of each run of `window` consecutive values."""
    if window <= 0 or window > len(values):
        raise ValueError("window must satisfy 1 <= window <= len(values)")
    return [sum(values[i : i + window]) / window for i in range(len(values) - window + 1)]
