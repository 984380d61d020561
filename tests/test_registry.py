"""One registry shape for every kind of component."""

from __future__ import annotations

import subprocess
import sys

import pytest

from codetrial.errors import ConfigError
from codetrial.gate import get_profile
from codetrial.registry import Registry
from codetrial.selection import named


def test_a_name_registered_twice_is_refused() -> None:
    things: Registry[int] = Registry("thing")
    things.register("one", 1)
    with pytest.raises(ValueError, match="thing 'one' registered twice"):
        things.register("one", 2)
    with pytest.raises(ValueError, match="registered twice"):
        things.declare("one", "json")


def test_an_unknown_name_gets_the_closest_and_the_known_ones() -> None:
    with pytest.raises(ConfigError, match=r"unknown gate profile 'stdlb'; did you mean 'stdlib'\?"):
        get_profile("stdlb")
    with pytest.raises(ConfigError, match=r"unknown strategy 'codeT'; did you mean 'codet'\?"):
        named("codeT")
    with pytest.raises(ConfigError, match=r"\(known: random, first, likelihood"):
        named("best")


def test_a_declared_name_imports_its_module_only_when_asked_for() -> None:
    probe = (
        "import sys\n"
        "from codetrial.models import KINDS\n"
        "from codetrial.verdict.harness import HARNESSES\n"
        "assert 'codetrial.models.ollama' not in sys.modules and 'httpx' not in sys.modules\n"
        "assert 'codetrial.verdict.pytest_harness' not in sys.modules\n"
        "assert KINDS.get('ollama').name == 'ollama' and 'httpx' in sys.modules\n"
        "HARNESSES.get('pytest')\n"
        "assert 'codetrial.verdict.pytest_harness' in sys.modules\n"
        "assert KINDS.names() == ['embedded', 'ollama', 'openai', 'scripted']\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
