from candidate import is_balanced


def test_nested_brackets_balanced():
    assert is_balanced("([]{})") is True


def test_wrong_nesting_unbalanced():
    assert is_balanced("([)]") is False


def test_unclosed_bracket_unbalanced():
    assert is_balanced("(()") is False
