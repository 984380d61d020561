from candidate import run_length_encode


def test_case_preserved():
    assert run_length_encode("aaAA") == [("a", 2), ("A", 2)]


def test_empty_input_gives_empty_list():
    assert run_length_encode("") == []


def test_single_character():
    assert run_length_encode("z") == [("z", 1)]
