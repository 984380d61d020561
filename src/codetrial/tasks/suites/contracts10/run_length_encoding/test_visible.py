from candidate import run_length_encode


def test_encodes_runs_as_tuples():
    assert run_length_encode("aaabcc") == [("a", 3), ("b", 1), ("c", 2)]


def test_only_adjacent_characters_grouped():
    assert run_length_encode("aabaa") == [("a", 2), ("b", 1), ("a", 2)]
