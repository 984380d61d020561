from candidate import is_palindrome


def test_simple_palindrome():
    assert is_palindrome("racecar") is True


def test_non_palindrome():
    assert is_palindrome("hello") is False


def test_ignores_case():
    assert is_palindrome("RaceCar") is True
