"""Every Python example in the README's "Python API" section runs, in order, as a
reader would paste them: one fresh interpreter, in an empty folder."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import CLI_ENV

README = Path(__file__).parents[1] / "README.md"

pytestmark = pytest.mark.embedded


def api_examples() -> list[str]:
    text = README.read_text()
    section = text.split("\n## Python API\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)


def test_the_api_section_has_an_example_of_each_function() -> None:
    code = "\n".join(api_examples())
    for name in (
        "run",
        "evaluate",
        "Judge",
        "judge",
        "select",
        "compare",
        "open_run",
        "load_tasks",
        "board",
        "write_board",
    ):
        assert re.search(rf"codetrial\.{name}\(", code), name


def test_the_readme_api_examples_run(tmp_path: Path) -> None:
    script = "\n".join(api_examples())
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=900,
        env=CLI_ENV,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert any(line.startswith("two_sum") or line.startswith("balanced_brackets") for line in lines)
    assert "syntax_error" in lines
    assert re.search(r"^oracle 100\.0% ", result.stdout, flags=re.MULTILINE)
    assert re.search(r"^first 100\.0% ", result.stdout, flags=re.MULTILINE)
    assert (tmp_path / "runs").is_dir() and len(list((tmp_path / "runs").iterdir())) == 2
    assert re.search(
        r"^samples/python \(prompt .*, tasks 10 .*\) 50\.0% ", result.stdout, flags=re.MULTILINE
    )
    assert (tmp_path / "board.html").is_file()
