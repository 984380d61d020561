from candidate import is_palindrome


def test_ignores_non_alphanumeric_characters():
    assert is_palindrome("A man, a plan, a canal: Panama") is True
    assert is_palindrome("No 'x' in Nixon") is True


def test_empty_string_is_palindrome():
    assert is_palindrome("") is True


def test_text_without_alphanumerics_is_palindrome():
    assert is_palindrome("?!") is True
