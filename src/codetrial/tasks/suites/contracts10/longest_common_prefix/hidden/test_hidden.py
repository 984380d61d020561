from candidate import longest_common_prefix


def test_empty_list_gives_empty_string():
    assert longest_common_prefix([]) == ""


def test_empty_word_gives_empty_string():
    assert longest_common_prefix(["abc", "", "abd"]) == ""


def test_case_sensitive():
    assert longest_common_prefix(["Apple", "apple"]) == ""


def test_mismatch_right_after_the_first_character():
    assert longest_common_prefix(["ab", "ax"]) == "a"
