from candidate import longest_common_prefix


def test_common_prefix():
    assert longest_common_prefix(["flower", "flow", "flight"]) == "fl"


def test_no_common_prefix():
    assert longest_common_prefix(["dog", "racecar", "car"]) == ""


def test_single_word_is_its_own_prefix():
    assert longest_common_prefix(["alone"]) == "alone"
