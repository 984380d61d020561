def run_length_encode(text: str) -> list[tuple[str, int]]:
    """Return the runs of text as a list of (char, count) tuples."""
    runs = []
    for ch in text:
        if runs and runs[-1][0] == ch:
            runs[-1] = (ch, runs[-1][1] + 1)
        else:
            runs.append((ch, 1))
    return runs
