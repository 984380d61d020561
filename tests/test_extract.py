from __future__ import annotations

from codetrial.extract import extract

CODE = "def f(x):\n    return x\n"


def test_fenced_block_is_taken_and_raw_kept() -> None:
    raw = f"Sure!\n```python\n{CODE}```\nThis returns x."
    candidate = extract(raw, "f")
    assert candidate.code == CODE
    assert candidate.raw == raw


def test_block_that_defines_the_function_wins() -> None:
    raw = f"```python\nprint(f(1))\n```\nand\n```python\n{CODE}```"
    assert extract(raw, "f").code == CODE


def test_unfenced_code_is_taken_whole() -> None:
    assert extract(CODE, "f").code == CODE


def test_untagged_and_unterminated_fences() -> None:
    assert extract(f"```\n{CODE}```", "f").code == CODE
    assert extract(f"```python\n{CODE}", "f").code == CODE


def test_prose_empty_and_reasoning_only_have_no_code() -> None:
    assert extract("I cannot help with that.", "f").code is None
    assert extract("", "f").code is None
    assert extract("   \n", "f").code is None
    assert extract("<think>def f(x): return 1</think>", "f").code is None
    assert extract("Hello", "f").code is None


def test_reasoning_is_stripped_before_extraction() -> None:
    raw = f"<think>```python\ndef g():\n    pass\n```</think>\n```python\n{CODE}```"
    assert extract(raw, "f").code == CODE


def test_other_languages_are_not_code() -> None:
    assert extract("```bash\nrm -rf /\n```", "f").code is None


def test_enormous_response_is_handled() -> None:
    raw = "```python\n" + CODE + "```\n" + "x" * 2_000_000
    assert extract(raw, "f").code == CODE


def test_definitions_only_keeps_what_the_entry_point_needs() -> None:
    """EvalPlus's sanitizing: imports, and the definitions and assignments reachable
    from the entry point; example calls, asserts, prints and a truncated tail go."""
    raw = (
        "```python\nimport math\nfrom typing import List\n\nLIMIT = 3\nunused = 1\n\n"
        "def helper(x):\n    return x * LIMIT\n\n@staticmethod\ndef other():\n    pass\n\n"
        "def f(x: List[int]):\n    return [helper(v) for v in x]\n\n"
        "print(f([1]))  # Output: [3]\nassert f([]) == []\nresult = f([2])\n"
        "if __name__ == '__main__':\n    f([0])\nprint(f([1, 2]), f(\n```"
    )
    code = extract(raw, "f", definitions_only=True).code
    assert code == (
        "import math\n\nfrom typing import List\n\nLIMIT = 3\n\n"
        "def helper(x):\n    return x * LIMIT\n\n"
        "def f(x: List[int]):\n    return [helper(v) for v in x]\n"
    )
    assert "print" in extract(raw, "f").code


def test_definitions_only_without_the_entry_point_or_definitions() -> None:
    """Without the entry point every definition stays (decorators with them); code
    with no definition, or none that parses, is judged as it came."""
    code = "@cache\ndef g():\n    return 1\n\nclass C:\n    pass\n\ng()\n"
    assert extract(code, "f", definitions_only=True).code == (
        "@cache\ndef g():\n    return 1\n\nclass C:\n    pass\n"
    )
    assert extract("```python\nprint(1)\n```", "f", definitions_only=True).code == "print(1)\n"
    assert extract("```python\n  def f(:\n```", "f", definitions_only=True).code == "  def f(:\n"
