"""Edit formats: a model's response turned into new file contents, or a reason why not."""

from __future__ import annotations

import difflib
import json
import re
from pathlib import Path

import pytest

from codetrial.edits import EDIT_FORMATS, Applied, EditFormat, Malformed, MalformedKind
from codetrial.errors import ConfigError
from tests.conftest import POLYGLOT

EXERCISES = POLYGLOT / "exercises"
WHOLE, DIFF, UDIFF = (EDIT_FORMATS.get(name) for name in ("whole", "diff", "udiff"))

STUB = """\
class Counter:
    def __init__(self):
        pass

    def increment(self):
        pass

    def reset(self):
        pass
"""
REFERENCE = """\
class Counter:
    def __init__(self):
        self.count = 0

    def increment(self):
        self.count += 1

    def reset(self):
        self.count = 0
"""
FILES = {"counter.py": STUB, "counter_test.py": "from counter import Counter\n"}
EDITABLE = ["counter.py"]


def applied(result: Applied | Malformed) -> dict[str, str]:
    assert isinstance(result, Applied), result
    return result.files


def malformed(result: Applied | Malformed, kind: MalformedKind, *phrases: str) -> str:
    """The reason, after checking the kind, its length and that it says each phrase."""
    assert isinstance(result, Malformed), result
    assert result.kind is kind, result
    assert len(result.reason) <= 600, result.reason
    for phrase in phrases:
        assert phrase in result.reason, result.reason
    return result.reason


def fence(body: str, info: str = "python") -> str:
    return "```" + info + "\n" + body.rstrip("\n") + "\n```\n"


def search_replace(search: str, replace: str) -> str:
    return f"<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n"


def udiff(old: str, new: str, path: str, numbers: bool = True, context: int = 3) -> str:
    """A unified diff as difflib writes it, or with `@@ ... @@` for every hunk header."""
    old_lines, new_lines = old.splitlines(), new.splitlines()
    lines = difflib.unified_diff(old_lines, new_lines, path, path, n=context, lineterm="")
    text = "\n".join(lines)
    return text if numbers else re.sub(r"(?m)^@@.*@@$", "@@ ... @@", text)


# --- the registry and the templates ------------------------------------------------


def test_the_three_formats_are_registered_with_their_templates() -> None:
    assert EDIT_FORMATS.names() == ["whole", "diff", "udiff"]
    for fmt in (WHOLE, DIFF, UDIFF):
        assert isinstance(fmt, EditFormat)
        assert "test file" in fmt.template
        assert re.fullmatch(r"[0-9a-f]{64}", fmt.template_sha256)
    assert "<<<<<<< SEARCH" in DIFF.template
    assert "@@ ... @@" in UDIFF.template
    with pytest.raises(ConfigError, match=r"unknown edit format 'udif'; did you mean 'udiff'"):
        EDIT_FORMATS.get("udif")


def test_a_task_that_lists_an_editable_file_it_lacks_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="not among the task's files"):
        WHOLE.apply("x", FILES, ["missing.py"])
    with pytest.raises(ValueError, match="not a relative path"):
        WHOLE.apply("x", {"/abs.py": ""}, [])


# --- the real exercises --------------------------------------------------------------


def _exercises() -> list[Path]:
    """The Exercism exercises of the shared data (shared/ beside the repo)."""
    return sorted(path for path in EXERCISES.iterdir() if (path / ".meta").is_dir())


@pytest.mark.parametrize("exercise", _exercises(), ids=lambda path: path.name)
def test_each_format_turns_an_exercise_stub_into_its_example(exercise: Path) -> None:
    config = json.loads((exercise / ".meta" / "config.json").read_text())
    (name,) = config["files"]["solution"]
    stub = (exercise / name).read_text()
    example = (exercise / ".meta" / "example.py").read_text()
    files = {name: stub, **{test: "" for test in config["files"]["test"]}}
    responses = {
        WHOLE: f"{name}\n{fence(example)}",
        DIFF: name + "\n" + fence(search_replace(stub.rstrip("\n") + "\n", example)),
        UDIFF: fence(udiff(stub, example, name), "diff"),
    }
    for fmt, response in responses.items():
        assert applied(fmt.apply(response, files, [name])) == {name: example}, fmt.name
    no_numbers = fence(udiff(stub, example, name, numbers=False), "diff")
    assert applied(UDIFF.apply(no_numbers, files, [name])) == {name: example}
    (test_file, *_) = config["files"]["test"]
    refused = WHOLE.apply(f"{test_file}\n{fence('pass')}", files, [name])
    malformed(refused, MalformedKind.FORBIDDEN_PATH, test_file, "may not be changed", name)


@pytest.mark.skipif(not EXERCISES.is_dir(), reason=f"{EXERCISES} is not on this machine")
def test_the_exercises_are_all_there() -> None:
    assert len(_exercises()) == 34


# --- paths, common to every format ---------------------------------------------------


def _writes(fmt: EditFormat, path: str) -> str:
    """A response in `fmt` that writes `x = 1` into the file `path`."""
    if fmt is WHOLE:
        return f"{path}\n{fence('x = 1')}"
    if fmt is DIFF:
        return path + "\n" + fence(search_replace("", "x = 1\n"))
    return fence(f"--- {path}\n+++ {path}\n@@ ... @@\n+x = 1", "diff")


@pytest.mark.parametrize("fmt", [WHOLE, DIFF, UDIFF], ids=lambda fmt: fmt.name)
@pytest.mark.parametrize("path", ["../counter.py", "/etc/passwd", "a\\b.py", "C:/x.py"])
def test_a_path_outside_the_workspace_is_refused(fmt: EditFormat, path: str) -> None:
    result = fmt.apply(_writes(fmt, path), FILES, EDITABLE, creatable=["x.py", "b.py"])
    malformed(result, MalformedKind.FORBIDDEN_PATH, "not a path inside the workspace")


@pytest.mark.parametrize("fmt", [WHOLE, DIFF, UDIFF], ids=lambda fmt: fmt.name)
def test_a_file_the_task_lets_the_model_create_is_created(fmt: EditFormat) -> None:
    result = fmt.apply(_writes(fmt, "./new.py"), FILES, EDITABLE, creatable=["new.py"])
    assert applied(result) == {"new.py": "x = 1\n"}
    refused = fmt.apply(_writes(fmt, "new.py"), FILES, EDITABLE)
    malformed(refused, MalformedKind.FORBIDDEN_PATH, "new.py is not a file of this task")


def test_test_files_and_unlisted_files_are_refused_and_nothing_is_applied() -> None:
    both = f"counter.py\n{fence(REFERENCE)}\ncounter_test.py\n{fence('pass')}"
    malformed(WHOLE.apply(both, FILES, EDITABLE), MalformedKind.FORBIDDEN_PATH, "may not be")
    other = f"helper.py\n{fence('pass')}"
    malformed(
        WHOLE.apply(other, FILES, EDITABLE),
        MalformedKind.FORBIDDEN_PATH,
        "helper.py is not a file of this task",
        "the files you may edit are: counter.py",
    )
    sr = "counter_test.py\n" + fence(search_replace(FILES["counter_test.py"], ""))
    malformed(DIFF.apply(sr, FILES, EDITABLE), MalformedKind.FORBIDDEN_PATH, "counter_test.py")
    diff = fence(udiff(FILES["counter_test.py"], "", "counter_test.py"), "diff")
    malformed(UDIFF.apply(diff, FILES, EDITABLE), MalformedKind.FORBIDDEN_PATH, "may not be")


def test_paths_are_normalised() -> None:
    assert applied(WHOLE.apply(f"./counter.py\n{fence(REFERENCE)}", FILES, EDITABLE)) == {
        "counter.py": REFERENCE
    }
    nested = {"pkg/mod.py": "x = 1\n"}
    result = WHOLE.apply(f"pkg//./mod.py\n{fence('x = 2')}", nested, ["./pkg/mod.py"])
    assert applied(result) == {"pkg/mod.py": "x = 2\n"}


# --- whole -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "named",
    [
        "counter.py\n```python",
        "# counter.py\n\n```python",
        "**counter.py**\n```python",
        "`counter.py`:\n```",
        "File: `counter.py`\n```py",
        "Here is the new file.\n```python counter.py",
        "```python:counter.py",
        '```python title="counter.py"',
    ],
)
def test_whole_reads_the_path_however_it_is_written(named: str) -> None:
    response = f"Sure.\n\n{named}\n{REFERENCE}```\n\nThis keeps a count."
    files = {**FILES, "other.py": ""}
    assert applied(WHOLE.apply(response, files, ["counter.py", "other.py"])) == {
        "counter.py": REFERENCE
    }


def test_whole_changes_several_files_and_reports_only_changed_ones() -> None:
    files = {**FILES, "util.py": "A = 1\n", "same.py": "B = 2\n"}
    response = (
        f"counter.py\n{fence(REFERENCE)}\nutil.py\n{fence('A = 2')}\nsame.py\n{fence('B = 2')}"
    )
    result = WHOLE.apply(response, files, ["counter.py", "util.py", "same.py"])
    assert applied(result) == {"counter.py": REFERENCE, "util.py": "A = 2\n"}


def test_whole_takes_a_lone_unnamed_block_as_the_only_editable_file() -> None:
    response = f"<think>Maybe\n```python\nwrong\n```\n</think>Here it is:\n{fence(REFERENCE)}"
    assert applied(WHOLE.apply(response, FILES, EDITABLE)) == {"counter.py": REFERENCE}
    blocks_named_elsewhere = f"counter.py\n{fence(REFERENCE)}\nUsage:\n{fence('Counter()')}"
    assert applied(WHOLE.apply(blocks_named_elsewhere, FILES, EDITABLE)) == {
        "counter.py": REFERENCE
    }


def test_whole_never_guesses_which_unnamed_block_is_the_file() -> None:
    two = f"{fence(REFERENCE)}\nUsage:\n{fence('Counter().increment()')}"
    malformed(WHOLE.apply(two, FILES, EDITABLE), MalformedKind.AMBIGUOUS, "none names a file")
    files = {**FILES, "util.py": ""}
    result = WHOLE.apply(fence(REFERENCE), files, ["counter.py", "util.py"])
    malformed(result, MalformedKind.PARSE_ERROR, "names a file", "line before")
    twice = f"counter.py\n{fence(STUB)}\ncounter.py\n{fence(REFERENCE)}"
    malformed(WHOLE.apply(twice, FILES, EDITABLE), MalformedKind.AMBIGUOUS, "given twice")


def test_whole_refuses_no_block_and_a_cut_off_block() -> None:
    malformed(WHOLE.apply(REFERENCE, FILES, EDITABLE), MalformedKind.NO_EDIT, "no fenced")
    malformed(WHOLE.apply("<think>only thinking", FILES, EDITABLE), MalformedKind.NO_EDIT)
    cut = f"counter.py\n```python\n{REFERENCE[:40]}"
    malformed(WHOLE.apply(cut, FILES, EDITABLE), MalformedKind.PARSE_ERROR, "cut off")


def test_whole_keeps_a_fence_inside_the_file_when_the_outer_fence_is_longer() -> None:
    readme = "# Title\n\n```sh\nmake\n```\n"
    response = f"README.md\n````markdown\n{readme}````\n"
    result = WHOLE.apply(response, {"README.md": ""}, ["README.md"])
    assert applied(result) == {"README.md": readme}


def test_whole_handles_windows_line_ends_and_keeps_a_file_s_own() -> None:
    response = f"counter.py\n{fence(REFERENCE)}".replace("\n", "\r\n")
    assert applied(WHOLE.apply(response, FILES, EDITABLE)) == {"counter.py": REFERENCE}
    crlf = {"counter.py": STUB.replace("\n", "\r\n")}
    result = WHOLE.apply(f"counter.py\n{fence(REFERENCE)}", crlf, EDITABLE)
    assert applied(result) == {"counter.py": REFERENCE.replace("\n", "\r\n")}


def test_whole_creates_only_a_file_the_task_lets_it_create() -> None:
    response = f"counter.py\n{fence(REFERENCE)}\nhelpers.py\n{fence('X = 1')}"
    result = WHOLE.apply(response, FILES, EDITABLE, creatable=["helpers.py"])
    assert applied(result) == {"counter.py": REFERENCE, "helpers.py": "X = 1\n"}
    malformed(WHOLE.apply(response, FILES, EDITABLE), MalformedKind.FORBIDDEN_PATH, "helpers")


# --- diff (SEARCH/REPLACE) -------------------------------------------------------------

INIT = "    def __init__(self):\n        pass\n"
INCREMENT = "    def increment(self):\n        pass\n"
RESET = "    def reset(self):\n        pass\n"


def _counter_blocks() -> str:
    return (
        search_replace(INIT, INIT.replace("pass", "self.count = 0"))
        + search_replace(INCREMENT, INCREMENT.replace("pass", "self.count += 1"))
        + search_replace(RESET, RESET.replace("pass", "self.count = 0"))
    )


def test_diff_applies_several_blocks_in_one_fence() -> None:
    response = f"I'll edit the stub.\n\ncounter.py\n{fence(_counter_blocks())}\nDone!"
    assert applied(DIFF.apply(response, FILES, EDITABLE)) == {"counter.py": REFERENCE}


def test_diff_reads_messy_responses() -> None:
    diff_fenced = fence("counter.py\n" + _counter_blocks())
    crlf = ("Sure:\n\n**counter.py**\n" + fence(_counter_blocks())).replace("\n", "\r\n")
    unfenced = "counter.py\n" + _counter_blocks()
    thinking = f"<think>\ncounter.py\n{fence(search_replace('x', 'y'))}</think>\n{unfenced}"
    for response in (diff_fenced, crlf, unfenced, thinking):
        assert applied(DIFF.apply(response, FILES, EDITABLE)) == {"counter.py": REFERENCE}


def test_diff_edits_several_files_and_a_later_fence_keeps_the_file() -> None:
    files = {**FILES, "util.py": "A = 1\nB = 1\n"}
    response = (
        "util.py\n"
        + fence(search_replace("A = 1\n", "A = 2\n"))
        + "then\n"
        + fence(search_replace("B = 1\n", "B = 2\n"))
        + "counter.py\n"
        + fence(_counter_blocks())
    )
    result = DIFF.apply(response, files, ["counter.py", "util.py"])
    assert applied(result) == {"util.py": "A = 2\nB = 2\n", "counter.py": REFERENCE}


def test_diff_replaces_only_the_first_exact_occurrence() -> None:
    # SEARCH text that occurs twice is the model's choice: the first place is replaced.
    result = DIFF.apply(
        fence(search_replace("        pass\n", "        return 1\n")), FILES, EDITABLE
    )
    changed = applied(result)["counter.py"]
    assert changed == STUB.replace("pass", "return 1", 1)
    assert changed.count("pass") == 2


def test_diff_tolerates_trailing_whitespace_when_one_place_matches() -> None:
    search = INCREMENT.replace("(self):", "(self):   ")
    response = fence(search_replace(search, INCREMENT.replace("pass", "self.count += 1")))
    result = applied(DIFF.apply(response, FILES, EDITABLE))["counter.py"]
    assert "        self.count += 1\n" in result
    loose_twice = fence(search_replace("        pass  \n", "        return\n"))
    malformed(
        DIFF.apply(loose_twice, FILES, EDITABLE),
        MalformedKind.AMBIGUOUS,
        "block 1",
        "trailing whitespace",
        "lines 3, 6, 9",
    )


def test_diff_tolerates_a_block_quoted_without_its_indentation() -> None:
    search = "def increment(self):\n    pass\n"
    response = fence(search_replace(search, "def increment(self):\n    self.count += 1\n"))
    result = applied(DIFF.apply(response, FILES, EDITABLE))["counter.py"]
    assert result == STUB.replace(INCREMENT, INCREMENT.replace("pass", "self.count += 1"))
    everywhere = fence(search_replace("pass\n", "return\n"))
    malformed(DIFF.apply(everywhere, FILES, EDITABLE), MalformedKind.AMBIGUOUS, "indentation")


def test_diff_says_where_a_search_text_that_matches_nothing_came_closest() -> None:
    search = "    def increment(self, by):\n        pass\n"
    response = "counter.py\n" + fence(_counter_blocks() + search_replace(search, ""))
    malformed(
        DIFF.apply(response, FILES, EDITABLE),
        MalformedKind.NO_MATCH,
        "block 4 (for counter.py) matches nothing",
        "the nearest lines",
        "5|     def increment(self):",
    )


def test_diff_creates_and_fills_files_with_an_empty_search() -> None:
    new = "helpers.py\n" + fence(search_replace("", "X = 1\n"))
    result = DIFF.apply(new, FILES, EDITABLE, creatable=["helpers.py"])
    assert applied(result) == {"helpers.py": "X = 1\n"}
    malformed(DIFF.apply(new, FILES, EDITABLE), MalformedKind.FORBIDDEN_PATH, "helpers.py")
    empty = {"counter.py": ""}
    assert applied(DIFF.apply(fence(search_replace("", STUB)), empty, EDITABLE)) == {
        "counter.py": STUB
    }
    not_empty = DIFF.apply(fence(search_replace("\n", "x = 1\n")), FILES, EDITABLE)
    malformed(not_empty, MalformedKind.NO_MATCH, "empty SEARCH", "is not empty")
    missing = "helpers.py\n" + fence(search_replace("X = 0\n", "X = 1\n"))
    result = DIFF.apply(missing, FILES, EDITABLE, creatable=["helpers.py"])
    malformed(result, MalformedKind.NO_MATCH, "does not exist yet")


@pytest.mark.parametrize(
    ("body", "phrase"),
    [
        ("<<<<<<< SEARCH\n    pass\n>>>>>>> REPLACE\n", "has >>>>>>> REPLACE where ======="),
        ("<<<<<<< SEARCH\n    pass\n=======\n    return\n", "cut off: it has no >>>>>>> REPLACE"),
        ("    pass\n=======\n    return\n>>>>>>> REPLACE\n", "without a <<<<<<< SEARCH"),
        ("<<<<<<< SEARCH\n<<<<<<< SEARCH\n", "has <<<<<<< SEARCH where ======="),
    ],
)
def test_diff_markers_out_of_place_are_parse_errors(body: str, phrase: str) -> None:
    response = f"counter.py\n{fence(body)}"
    malformed(DIFF.apply(response, FILES, EDITABLE), MalformedKind.PARSE_ERROR, phrase, "block 1")


def test_diff_refuses_no_block_a_cut_off_fence_and_a_block_without_a_file() -> None:
    malformed(DIFF.apply(fence(REFERENCE), FILES, EDITABLE), MalformedKind.NO_EDIT)
    cut = "counter.py\n```python\n" + search_replace(INIT, INIT)
    malformed(DIFF.apply(cut, FILES, EDITABLE), MalformedKind.PARSE_ERROR, "cut off")
    files = {**FILES, "util.py": ""}
    result = DIFF.apply(fence(_counter_blocks()), files, ["counter.py", "util.py"])
    malformed(result, MalformedKind.PARSE_ERROR, "block 1 names no file")


def test_diff_ignores_a_lone_divider_in_prose() -> None:
    response = f"Plan\n=======\n\ncounter.py\n{fence(_counter_blocks())}"
    assert applied(DIFF.apply(response, FILES, EDITABLE)) == {"counter.py": REFERENCE}


# --- udiff -------------------------------------------------------------------------------


def test_udiff_applies_a_diff_of_several_hunks_and_files() -> None:
    files = {**FILES, "util.py": "A = 1\n"}
    response = (
        "Here is the patch:\n\n"
        + fence(
            udiff(STUB, REFERENCE, "counter.py") + "\n" + udiff("A = 1\n", "A = 2\n", "util.py"),
            "diff",
        )
        + "\nIt fixes the counter."
    )
    result = UDIFF.apply(response, files, ["counter.py", "util.py"])
    assert applied(result) == {"counter.py": REFERENCE, "util.py": "A = 2\n"}


def test_udiff_ignores_wrong_line_numbers() -> None:
    diff = (
        "--- counter.py\n+++ counter.py\n"
        "@@ -30,2 +30,2 @@\n     def increment(self):\n-        pass\n+        self.count += 1\n"
        "@@ -3,2 +3,2 @@\n     def reset(self):\n-        pass\n+        self.count = 0\n"
    )
    result = applied(UDIFF.apply(fence(diff, "diff"), FILES, EDITABLE))["counter.py"]
    assert result == REFERENCE.replace(INIT.replace("pass", "self.count = 0"), INIT)
    no_context = udiff(STUB, REFERENCE, "counter.py", context=0)
    wrong = re.sub(r"(?m)^@@ .* @@$", "@@ -40 +40 @@", no_context)
    assert applied(UDIFF.apply(fence(no_context, "diff"), FILES, EDITABLE)) == {
        "counter.py": REFERENCE
    }
    malformed(
        UDIFF.apply(fence(wrong, "diff"), FILES, EDITABLE),
        MalformedKind.AMBIGUOUS,
        "hunk 1 (for counter.py) occur at lines 3, 6, 9",
    )


def test_udiff_tolerates_trailing_whitespace_and_dropped_blank_line_prefixes() -> None:
    diff = (
        "--- a/counter.py\n+++ b/counter.py\n@@ -4,3 +4,3 @@\n"
        "\n     def increment(self):   \n-        pass\n+        self.count += 1\n"
    )
    result = applied(UDIFF.apply(fence(diff, "diff"), FILES, EDITABLE))["counter.py"]
    assert result == STUB.replace(INCREMENT, INCREMENT.replace("pass", "self.count += 1"))


def test_udiff_fails_cleanly_on_a_hunk_whose_context_is_absent() -> None:
    diff = (
        "--- counter.py\n+++ counter.py\n@@ ... @@\n"
        " class Counter:\n     def __init__(self):\n-        pass\n+        self.count = 0\n"
        "@@ ... @@\n     def decrement(self):\n-        pass\n+        self.count -= 1\n"
    )
    malformed(
        UDIFF.apply(fence(diff, "diff"), FILES, EDITABLE),
        MalformedKind.NO_MATCH,
        "hunk 2 (for counter.py) match nothing",
        "nearest lines",
    )


def test_udiff_settles_a_repeated_context_by_order_or_line_number_and_else_refuses() -> None:
    hunk = "-        pass\n+        return 1\n"
    header = "--- counter.py\n+++ counter.py\n"
    ordered = f"{header}@@ ... @@\n     def increment(self):\n{hunk}@@ ... @@\n{hunk}"
    result = applied(UDIFF.apply(fence(ordered, "diff"), FILES, EDITABLE))["counter.py"]
    assert result == STUB.replace(INCREMENT, INCREMENT.replace("pass", "return 1")).replace(
        RESET, RESET.replace("pass", "return 1")
    )
    numbered = f"{header}@@ -6,1 +6,1 @@\n{hunk}"
    result = applied(UDIFF.apply(fence(numbered, "diff"), FILES, EDITABLE))["counter.py"]
    assert result == STUB.replace(INCREMENT, INCREMENT.replace("pass", "return 1"))
    unnumbered = f"{header}@@ ... @@\n{hunk}"
    malformed(
        UDIFF.apply(fence(unnumbered, "diff"), FILES, EDITABLE),
        MalformedKind.AMBIGUOUS,
        "hunk 1 (for counter.py)",
        "lines 3, 6, 9",
    )


def test_udiff_reads_messy_diffs() -> None:
    body = "-        pass\n+        self.count = 0\n"
    without_at = f"--- counter.py\n+++ counter.py\n     def __init__(self):\n{body}"
    headless = f"@@ -2,2 +2,2 @@\n     def __init__(self):\n{body}"
    unfenced = f"Patch:\n\n{without_at}\nThis sets the count.\n- it starts at zero"
    crlf = fence(without_at, "diff").replace("\n", "\r\n")
    expected = {"counter.py": STUB.replace(INIT, INIT.replace("pass", "self.count = 0"))}
    for response in (fence(without_at, "diff"), fence(headless, "diff"), unfenced, crlf):
        assert applied(UDIFF.apply(response, FILES, EDITABLE)) == expected


def test_udiff_creates_a_new_file_and_refuses_a_deletion() -> None:
    new = fence("--- /dev/null\n+++ b/helpers.py\n@@ -0,0 +1,2 @@\n+X = 1\n+Y = 2", "diff")
    result = UDIFF.apply(new, FILES, EDITABLE, creatable=["helpers.py"])
    assert applied(result) == {"helpers.py": "X = 1\nY = 2\n"}
    malformed(UDIFF.apply(new, FILES, EDITABLE), MalformedKind.FORBIDDEN_PATH, "helpers.py")
    gone = fence("--- counter.py\n+++ /dev/null\n@@ ... @@\n-class Counter:", "diff")
    malformed(UDIFF.apply(gone, FILES, EDITABLE), MalformedKind.PARSE_ERROR, "deletes counter.py")
    extra = fence("--- counter.py\n+++ counter.py\n@@ ... @@\n+import sys", "diff")
    malformed(UDIFF.apply(extra, FILES, EDITABLE), MalformedKind.AMBIGUOUS, "no context")


def test_udiff_keeps_a_missing_final_newline_when_the_diff_says_so() -> None:
    diff = "--- a.txt\n+++ a.txt\n@@ -1 +1 @@\n-one\n+two\n\\ No newline at end of file\n"
    result = UDIFF.apply(fence(diff, "diff"), {"a.txt": "one"}, ["a.txt"])
    assert applied(result) == {"a.txt": "two"}


def test_udiff_refuses_a_line_that_lost_its_prefix_and_malformed_answers() -> None:
    lost = (
        "--- counter.py\n+++ counter.py\n@@ ... @@\n"
        "class Counter:\n     def __init__(self):\n-        pass\n+        self.count = 0\n"
    )
    malformed(
        UDIFF.apply(fence(lost, "diff"), FILES, EDITABLE),
        MalformedKind.PARSE_ERROR,
        "hunk 1: the line 'class Counter:' does not start with",
    )
    malformed(UDIFF.apply(fence(REFERENCE), FILES, EDITABLE), MalformedKind.NO_EDIT, "no diff")
    cut = "```diff\n--- counter.py\n+++ counter.py\n@@ ... @@\n-class Counter:\n"
    malformed(UDIFF.apply(cut, FILES, EDITABLE), MalformedKind.PARSE_ERROR, "cut off")
    files = {**FILES, "util.py": ""}
    headless = fence("@@ ... @@\n-class Counter:\n+class Count:", "diff")
    result = UDIFF.apply(headless, files, ["counter.py", "util.py"])
    malformed(result, MalformedKind.PARSE_ERROR, "hunk 1 comes before any")
