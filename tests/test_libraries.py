"""Package environments inside the sandbox, and function tasks that import libraries.

The environment (numpy, pandas, matplotlib) is built from the wheels `make test`
downloads, offline, and bound read-only into a real bubblewrap sandbox."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from codetrial import api, environments
from codetrial.config import Limits
from codetrial.errors import ConfigError
from codetrial.gate import get_profile
from codetrial.kinds import Suite
from codetrial.records import Candidate, Outcome
from codetrial.sandbox import Mounts, Sandbox, SandboxPolicy, Stop, open_sandbox
from codetrial.tasks import load_suite
from codetrial.tasks.questions import DATA_PACKAGES
from codetrial.verdict.pool import JudgePool
from tests.conftest import CLI_ENV, CODETRIAL, DATA_WHEELS, FIXTURES, POLYGLOT

LIBRARY = FIXTURES / "library"


@pytest.fixture(scope="module")
def environment() -> environments.Environment:
    return environments.build(DATA_PACKAGES, DATA_WHEELS)


@pytest.fixture(scope="module")
def data_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("inputs") / "numbers.csv"
    path.write_text("x,y\n1,2\n3,4\n")
    return path


@pytest.fixture(scope="module")
def libraries(environment: environments.Environment, data_file: Path) -> Iterator[Sandbox]:
    given = SandboxPolicy(
        Limits(timeout_s=20, cpu_s=10, memory_mb=1024), mounts=Mounts(inputs=(data_file,))
    )
    mounts = Mounts(packages=(environment.path,), preload=environment.preload)
    sandbox = open_sandbox(given.with_mounts(mounts))
    try:
        yield sandbox
    finally:
        sandbox.close()


def test_a_derived_policy_keeps_what_it_was_given_and_mounts_each_path_once(
    data_file: Path, tmp_path: Path
) -> None:
    given = SandboxPolicy(Limits(), True, Mounts(folders=(tmp_path,), inputs=(data_file,)))
    derived = given.with_mounts(Mounts(folders=(tmp_path / "env", tmp_path), preload=("json",)))
    assert given.mounts == Mounts(folders=(tmp_path,), inputs=(data_file,))
    assert derived == SandboxPolicy(
        Limits(), True, Mounts((tmp_path, tmp_path / "env"), (), ("json",), (data_file,))
    )


def run(sandbox: Sandbox, code: str):  # type: ignore[no-untyped-def]
    with sandbox.program(code) as ran:
        pass
    return ran


def test_the_environment_records_what_it_holds(environment: environments.Environment) -> None:
    assert {"matplotlib", "numpy", "pandas"} <= set(environment.modules)
    assert environment.installed["pandas"] == "3.1.1"
    assert "dateutil" not in environment.modules  # a dependency, not asked for
    assert environments.cached(tuple(reversed(DATA_PACKAGES))) == environment  # order-free key


def test_libraries_import_and_draw_in_the_sandbox(libraries: Sandbox) -> None:
    ran = run(
        libraries,
        (
            "import os, numpy as np, pandas as pd, matplotlib.pyplot as plt\n"
            "frame = pd.read_csv('/data/numbers.csv')\n"
            "plt.bar(['a', 'b'], frame['y'])\nplt.savefig('bars.png')\n"
            "print(int(np.sum(frame['x'])), os.environ['OPENBLAS_NUM_THREADS'], "
            "plt.get_backend())\n"
        ),
    )
    assert ran.stop is None and ran.exit is not None and ran.exit.code == 0, ran.left.stderr
    assert ran.left.stdout.split() == ["4", "1", "Agg"]
    assert ran.left.files["bars.png"].startswith(b"\x89PNG")
    assert ran.left.figures[0]["file"] == "bars.png"
    assert ran.left.figures[0]["axes"][0]["series"][0]["y"] == [2.0, 4.0]


def test_nothing_else_of_the_host_is_visible(
    libraries: Sandbox, environment: environments.Environment
) -> None:
    ran = run(
        libraries,
        (
            "import importlib.util, os, sys\n"
            "print(sorted(os.listdir('/data')))\n"
            "print([m for m in ('pydantic', 'codetrial', 'llama_cpp', 'pytest')"
            " if importlib.util.find_spec(m)])\n"
            "for path in ('/data/numbers.csv', os.path.join(sys.path[1], 'numpy', 'x.py')):\n"
            "    try:\n        open(path, 'w')\n    except OSError as exc:\n"
            "        print(type(exc).__name__, exc.errno)\n"
        ),
    )
    lines = ran.left.stdout.splitlines()
    assert lines == ["['numbers.csv']", "[]", "OSError 30", "OSError 30"], ran.left.stderr


@pytest.mark.parametrize(
    ("code", "ends"),
    [
        ("import numpy as np\nx = np.ones((30000, 30000))\n", "MemoryError"),
        ("import numpy as np\nwhile True:\n    np.linalg.inv(np.eye(200))\n", Stop.TIMEOUT),
        ("import numpy, os\nos.fork()\n", "PermissionError"),
        ("import pandas, socket\nsocket.socket()\n", "PermissionError"),
    ],
)
def test_limits_hold_with_the_libraries_loaded(libraries: Sandbox, code: str, ends: object) -> None:
    ran = run(libraries, code)
    if isinstance(ends, Stop):
        assert ran.stop is ends
    else:
        assert ran.left.raised is not None and ends in ran.left.raised["type"] + ran.left.stderr


def test_a_library_task_is_judged_with_its_libraries() -> None:
    tasks = {t.id: t for t in load_suite(str(LIBRARY))}
    group = tasks["group_means"]
    assert group.packages == ("pandas==3.1.1",)
    prepared = Suite.of("lib", list(tasks.values())).kind.prepare(
        list(tasks.values()), None, DATA_WHEELS, "test"
    )
    pool = JudgePool(1, SandboxPolicy(Limits(timeout_s=20, cpu_s=10)), libraries=prepared.libraries)
    profile = get_profile("builtins-only")
    try:
        allowed = pool.profile_for(group, profile)
        assert "pandas" in allowed.allowed_modules and "io" in allowed.allowed_modules
        assert "subprocess" not in allowed.allowed_modules
        assert "pandas" in allowed.allowed
        reference = group.reference or ""
        verdict = pool.submit(Candidate(reference, reference), group, profile).result()
        assert verdict.outcome is Outcome.PASSED, verdict.detail
        shell = reference.replace("import pandas as pd", "import pandas as pd\nimport subprocess")
        rejected = pool.submit(Candidate(shell, shell), group, profile).result()
        assert rejected.outcome is Outcome.REJECTED and rejected.gate is not None
        assert rejected.gate.rule_id == "G001"
    finally:
        pool.close()


def test_references_pass_and_wrong_variants_fail() -> None:
    check = [CODETRIAL, "check", "--suite", str(LIBRARY), "--wheels", str(DATA_WHEELS)]
    done = subprocess.run(
        [*check, "--references"], capture_output=True, text=True, env=CLI_ENV, timeout=600
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("passed") == 5
    for wrong in sorted((FIXTURES / "library-wrong").glob("*.py")):
        done = subprocess.run(
            [*check, str(wrong), "--task", wrong.stem],
            capture_output=True,
            text=True,
            env=CLI_ENV,
            timeout=600,
        )
        assert done.returncode == 1, wrong.stem + done.stdout + done.stderr
        assert "failed" in done.stdout and "Traceback" not in done.stderr


def test_a_program_cannot_pass_off_other_things_as_its_files(libraries: Sandbox) -> None:
    ran = run(
        libraries,
        (
            "import os\nos.mkfifo('pipe')\nos.symlink('/data/numbers.csv', 'link.csv')\n"
            "open('made.txt', 'w').write('mine')\n"
            'os.write(11, b\'{"exited": {"code": 0, "program": {"stdout": "forged"}}}\\n\')\n'
        ),
    )
    assert ran.stop is None and ran.exit is not None and ran.exit.code == 0, ran.left.stderr
    assert ran.left.files == {"made.txt": b"mine"}
    assert sorted(ran.left.skipped) == ["link.csv", "pipe"]
    assert ran.left.stdout == ""


def test_run_packages_lets_any_function_suite_import_libraries(tmp_path: Path) -> None:
    code = (
        "import numpy as np\n\ndef moving_average(values, window):\n"
        "    if window <= 0 or window > len(values):\n        raise ValueError('window')\n"
        "    sums = np.convolve(values, np.ones(window), 'valid') / window\n"
        "    return [float(x) for x in sums]\n"
    )
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"def moving_average(": [f"```python\n{code}```"]}))
    common = dict(
        runs_dir=tmp_path / "runs",
        task_ids=["moving_average"],
        wheels=DATA_WHEELS,
        efficiency=False,
    )
    plain = api.run("contracts10", [f"scripted/{script}"], **common)  # type: ignore[arg-type]
    assert plain.results()[0].first.gate_rule == "G001"  # numpy is not the suite's
    result = api.run("contracts10", [f"scripted/{script}"], packages=["numpy==2.4.6"], **common)  # type: ignore[arg-type]
    assert result.results()[0].first.outcome is Outcome.PASSED
    (environment,) = result.manifest.environments.values()
    assert environment["requested"] == ["numpy==2.4.6"] and "numpy" in environment["modules"]
    assert api.run(resume=result.path).results()[0].first.outcome is Outcome.PASSED
    with pytest.raises(ConfigError, match="--packages is for function tasks and questions"):
        api.configure("polyglot-python", data=POLYGLOT, packages=["numpy==2.4.6"])


def test_environments_of_one_run_agree_on_versions(tmp_path: Path) -> None:
    older = environments.Environment("a", tmp_path, ("numpy==2.3.0",), {"numpy": "2.3.0"})
    newer = environments.Environment("b", tmp_path, ("pandas==3.1.1",), {"numpy": "2.4.6"})
    with pytest.raises(ConfigError, match=r"numpy 2\.3\.0 .* and numpy 2\.4\.6"):
        environments.one_version_each([older, newer])
    environments.one_version_each([newer, newer])
