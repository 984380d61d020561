"""The static scan finds each reach into the test machinery it names, on the lines a
candidate changed, and nothing in ordinary code; and it finds none in the reference
solutions and gold patches codetrial ships or is measured on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codetrial.gate.scan import RULES, changed_lines, is_test_file, scan, scan_files, scan_patch
from codetrial.gate.scan import unread as unread_hunks
from codetrial.tasks.workspace import load_exercism
from tests.conftest import POLYGLOT

FIXTURES = Path(__file__).parent / "fixtures"

# Each rule's hits: (the source, the line it is on).
HITS = {
    "S002": [
        ("def pytest_runtest_makereport(item, call):\n    pass\n", 1),
        ("import _pytest.reports\n", 1),
        ("from _pytest.runner import runtestprotocol\n", 1),
        ("import pytest\n", 1),
        ("pytest_plugins = ['evil']\n", 1),
    ],
    "S003": [
        ("import unittest\nunittest.TestCase.assertEqual = lambda *a: None\n", 2),
        ("from unittest import case\ncase.TestCase.run = None\n", 2),
        ("import unittest.result\nunittest.result.TestResult.addFailure = print\n", 2),
        ("from unittest import TestCase\nTestCase.failureException = Exception\n", 2),
        ("class Sneaky:\n    def go(self, case):\n        case.assertTrue = print\n", 3),
        ("def go(case):\n    setattr(case, 'assertEqual', print)\n", 2),
    ],
    "S004": [
        ("import gc\nfound = gc.get_objects()\n", 2),
        ("import gc\nrefs = gc.get_referrers(object())\n", 2),
        ("from gc import get_objects as everything\n", 1),
        ("import gc as g\nwalk = g.get_objects\n", 2),
    ],
    "S005": [
        ("import sys\nsys.settrace(None)\n", 2),
        ("import sys\nsys.setprofile(None)\n", 2),
        ("import sys\nframe = sys._getframe(1)\n", 2),
        ("import inspect\nframe = inspect.currentframe()\n", 2),
        ("def up(frame):\n    return frame.f_back\n", 2),
        ("def names(frame):\n    return frame.f_globals, frame.f_locals\n", 2),
    ],
    "S006": [
        ("import atexit\n", 1),
        ("import os\nos._exit(0)\n", 2),
        ("from os import _exit\n", 1),
    ],
    "S007": [
        ("import builtins\nbuiltins.print = lambda *a: None\n", 2),
        ("import builtins\nsetattr(builtins, 'len', lambda x: 0)\n", 2),
        ("__builtins__['AssertionError'] = Exception\n", 1),
    ],
    "S008": [
        ("import json\njson.dumps = lambda x: '{}'\n", 2),
        ("import os\nos.write = None\n", 2),
        ("import json\nsetattr(json, 'loads', None)\n", 2),
        ("import os.path as p\np.join = None\n", 2),
        ("from os import path\npath.sep = '/'\n", 2),
        ("import sys\nsys.stdout = None\n", 2),
        ("import sys\nsys.modules['json'] = None\n", 2),
        ("import json\ndel json.dumps\n", 2),
        ("import json\njson.__dict__['dumps'] = None\n", 2),
    ],
}

# Ordinary code that reads like the hits and is none of them.
CLEAN = [
    "import json\n\ndef save(x):\n    return json.dumps(x)\n",
    "import os\nimport sys\nprint(os.getpid(), sys.argv, file=sys.stderr)\nsys.exit(0)\n",
    "import gc\ngc.collect()\ngc.disable()\n",
    "class Point:\n    def __init__(self, x):\n        self.x = x\n        self.failed = False\n",
    "import unittest\nclass T(unittest.TestCase):\n"
    "    def test(self):\n        self.assertEqual(1, 1)\n",
    "import builtins\nprint(builtins.len([1]))\n",
    "def f(frame):\n    return frame.lineno\n",
    "import os\nos.environ.get('HOME')\nos.path.join('a', 'b')\n",
    "queue = []\nqueue.append(1)\n",
    "def f(json):\n    json.x = 1\n",  # a parameter named like a module is no module
    "import logging\nlog = logging.getLogger(__name__)\nlog.level = 10\n",
    "from dataclasses import dataclass\n@dataclass\nclass A:\n    x: int = 0\n",
]


def rules(found: list) -> set[str]:  # type: ignore[type-arg]
    return {s.rule for s in found}


@pytest.mark.parametrize(
    ("rule", "source", "line"),
    [(rule, source, line) for rule, cases in HITS.items() for source, line in cases],
)
def test_each_rule_finds_what_it_names(rule: str, source: str, line: int) -> None:
    found = scan("solution.py", source)
    assert [(s.rule, s.line) for s in found if s.rule == rule] == [(rule, line)], found
    hit = next(s for s in found if s.rule == rule)
    assert hit.path == "solution.py" and hit.message
    assert hit.text == source.splitlines()[line - 1].strip()


@pytest.mark.parametrize("source", CLEAN)
def test_ordinary_code_is_not_suspect(source: str) -> None:
    assert scan("solution.py", source) == []


def test_every_rule_has_an_id_and_a_summary_and_is_tested() -> None:
    assert set(RULES) == set(HITS) | {"S001"}
    assert all(summary for summary in RULES.values())


@pytest.mark.parametrize(
    "path", ["conftest.py", "pkg/conftest.py", "pytest.ini", "sitecustomize.py", "a.pth"]
)
def test_a_file_loaded_by_itself_is_suspect_whatever_it_holds(path: str) -> None:
    assert rules(scan_files({}, {path: "x = 1\n"})) == {"S001"}


def test_pytest_configuration_changed_is_suspect() -> None:
    before = {"setup.cfg": "[metadata]\nname = x\n"}
    after = {"setup.cfg": "[metadata]\nname = x\n[tool:pytest]\naddopts = -p evil\n"}
    found = scan_files(before, after)
    assert [(s.rule, s.line) for s in found] == [("S001", 3)]
    assert scan_files(before, {"setup.cfg": "[metadata]\nname = y\n"}) == []


def test_test_files_may_use_pytest_but_nothing_else() -> None:
    hooks = "import pytest\ndef pytest_generate_tests(metafunc):\n    pass\n"
    for path in ("test_thing.py", "thing_test.py", "tests/helpers.py", "pkg/testing/util.py"):
        assert is_test_file(path)
        assert scan(path, hooks) == []
        assert rules(scan(path, "import gc\ngc.get_objects()\n")) == {"S004"}
    assert rules(scan("src/_pytest/runner.py", hooks)) == set()  # pytest's own package
    assert rules(scan("thing.py", hooks)) == {"S002"}


def test_a_parse_failure_is_not_a_hit() -> None:
    assert scan("solution.py", "import gc\ngc.get_objects(\n") == []
    assert scan("solution.py", "(" * 10_000) == []


def test_only_changed_lines_count() -> None:
    before = "import atexit\n\ndef f():\n    return 1\n"
    after = "import atexit\n\ndef f():\n    import json\n    json.dumps = str\n    return 1\n"
    assert changed_lines(before, after) == {4, 5}
    found = scan_files({"m.py": before}, {"m.py": after})
    assert [(s.path, s.line, s.rule) for s in found] == [("m.py", 5, "S008")]
    assert scan_files({"same.py": "import atexit\n"}, {"same.py": "import atexit\n"}) == []
    # a file the candidate adds is read whole
    assert [(s.path, s.rule) for s in scan_files({}, {"new.py": "import atexit\n"})] == [
        ("new.py", "S006")
    ]


PATCH = """diff --git a/pkg/mod.py b/pkg/mod.py
index 1111111..2222222 100644
--- a/pkg/mod.py
+++ b/pkg/mod.py
@@ -40,7 +40,9 @@ def last(iterable, default=None):
             return next(reversed(iterable))
         else:
             return iterable[-1]
-    except (IndexError, TypeError):
+    except (IndexError, TypeError, StopIteration):
+        import gc
+        gc.get_objects()
         if default is None:
             raise ValueError(
                 'last() was called on an empty iterable, and no default was '
@@ -90,3 +92,4 @@ class Thing:
     def f(self):
         x = 1
+        json.dumps = str
         return x
diff --git a/conftest.py b/conftest.py
new file mode 100644
index 0000000..3333333
--- /dev/null
+++ b/conftest.py
@@ -0,0 +1,3 @@
+import pytest
+def pytest_runtest_makereport(item, call):
+    pass
"""


def test_a_patch_is_read_from_its_hunks() -> None:
    found = scan_patch(PATCH)
    assert [(s.path, s.line, s.rule) for s in found] == [
        ("pkg/mod.py", 45, "S004"),
        ("pkg/mod.py", 94, "S008"),
        ("conftest.py", 1, "S001"),
    ]
    assert found[1].text == "json.dumps = str"
    assert unread_hunks(PATCH) == []


def test_an_unreadable_hunk_is_counted_not_a_hit() -> None:
    patch = "--- a/m.py\n+++ b/m.py\n@@ -1,2 +1,2 @@\n x = (\n-  1,\n+  gc.get_objects(,\n"
    assert scan_patch(patch) == []
    assert unread_hunks(patch) == [("m.py", 1)]


def test_no_reference_solution_or_gold_patch_is_suspect() -> None:
    """No false alarm on what is known to be honest: the gold patches of swe-mini and
    their test patches, and the reference solutions of the aider Python exercises,
    against their stubs and read whole (bench/scan_references.py prints the same)."""
    tasks = load_exercism(POLYGLOT, "polyglot-python")
    assert len(tasks) == 34
    for task in tasks:
        given, reference = dict(task.files), dict(task.reference)
        assert scan_files(given, given | reference) == [], task.id
        assert scan_files({}, reference) == [], task.id
    for line in (FIXTURES / "swe-mini" / "instances.jsonl").read_text().splitlines():
        instance = json.loads(line)
        for patch in (instance["patch"], instance["test_patch"]):
            assert scan_patch(patch) == [], instance["instance_id"]
            assert unread_hunks(patch) == [], instance["instance_id"]
