from candidate import is_balanced


def test_other_characters_ignored():
    assert is_balanced("a(b[c]d)e") is True


def test_empty_string_balanced():
    assert is_balanced("") is True


def test_closing_without_opening_unbalanced():
    assert is_balanced("())") is False
