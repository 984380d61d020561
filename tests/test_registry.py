"""One registry shape for every kind of component."""

from __future__ import annotations

import subprocess
import sys

import pytest

from codetrial.errors import ConfigError
from codetrial.executors import EXECUTORS
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
    with pytest.raises(ConfigError, match=r"unknown executor 'rya'; did you mean 'ray'\?"):
        EXECUTORS.get("rya")


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


def test_sweeps_and_samples_find_their_executors_in_one_registry() -> None:
    """Choosing the Ray executor imports its module, not Ray: that waits for a cluster."""
    probe = (
        "import sys\n"
        "import codetrial.samples, codetrial.sweep\n"
        "from codetrial.executors import EXECUTORS, executor\n"
        "assert EXECUTORS.names() == ['local', 'ray']\n"
        "assert 'codetrial.executors.local' not in sys.modules\n"
        "assert 'codetrial.executors.cluster' not in sys.modules\n"
        "assert type(executor(None)).__module__ == 'codetrial.executors.local'\n"
        "on_ray = executor('auto')\n"
        "assert type(on_ray).__module__ == 'codetrial.executors.cluster'\n"
        "assert on_ray.address == 'auto' and 'ray' not in sys.modules\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
