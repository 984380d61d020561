"""The report as a person sees it: a real run's report.html in headless Chromium."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, sync_playwright

from codetrial.records import Outcome
from codetrial.report.charts import OUTCOME_COLOURS
from codetrial.tasks import Task
from codetrial.tasks.workspace import load_exercism
from tests.conftest import CLI_ENV, CODETRIAL, DATA_WHEELS, POLYGLOT, SWE_WHEELS, fenced
from tests.test_repository import repository_instance

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--no-first-run",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, contracts10: dict[str, Task]) -> list[Path]:
    """Two real runs of the scripted backend: one with a repair and a rejection."""
    root = tmp_path_factory.mktemp("browser")
    wrong_two_sum = "def two_sum(nums, target):\n    return (0, 0)\n"
    scripts = [
        {
            "Answer yes or no": ["0.9", "0.2", "0.6"],
            "def is_palindrome(": [fenced(contracts10["palindrome"].reference or "")],
            "def two_sum(": [fenced(wrong_two_sum), fenced(contracts10["two_sum"].reference or "")],
            "def merge_intervals(": [fenced("import os\ndef merge_intervals(x):\n    return x")],
        },
        {
            "def is_palindrome(": ["I will not."],
            "def two_sum(": [fenced(contracts10["two_sum"].reference or "")],
            "def merge_intervals(": [fenced(contracts10["merge_intervals"].reference or "")],
        },
    ]
    made = []
    for index, script in enumerate(scripts):
        path = root / f"script{index}.json"
        path.write_text(json.dumps(script))
        runs_dir = root / f"runs{index}"
        result = subprocess.run(
            [
                CODETRIAL,
                "run",
                "--model",
                f"scripted/{path}",
                "--runs-dir",
                str(runs_dir),
                "--task",
                "palindrome",
                "--task",
                "two_sum",
                "--task",
                "merge_intervals",
            ],
            capture_output=True,
            text=True,
            env=CLI_ENV,
            timeout=300,
        )
        assert result.returncode == 0, result.stderr
        (run_dir,) = runs_dir.iterdir()
        made.append(run_dir)
    return made


@pytest.fixture(scope="module")
def page() -> Iterator[Page]:
    assert Path(CHROMIUM).is_file(), (
        "the browser test needs Debian's chromium (make test installs it)"
    )
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield browser.new_page(viewport={"width": 1280, "height": 900})
        browser.close()


def _open(page: Page, path: Path) -> list[str]:
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: errors.append(r.url) if not r.url.startswith("file:") else None)
    page.goto(path.as_uri())
    return errors


def test_report_renders_and_drills_down(page: Page, runs: list[Path], tmp_path: Path) -> None:
    errors = _open(page, runs[0] / "report.html")
    page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
    for selector in (
        "header h1",
        "#summary table",
        "#chart-first-vs-repaired svg",
        "#pass-at-k table",
        "#chart-outcomes svg",
        "#matrix table",
        "#conditions",
        "#efficiency table",
    ):
        assert page.locator(selector).first.is_visible(), selector
    assert "1/3" in page.locator("#summary table").inner_text()
    assert "all tasks" in page.locator("#efficiency table").first.inner_text()
    per_task = page.locator("#efficiency details table")
    assert not per_task.is_visible()
    page.locator("#efficiency summary", has_text="per task").click()
    assert "palindrome" in per_task.inner_text() and "two_sum" in per_task.inner_text()
    two_sum = page.locator("div.candidate", has_text="two_sum")
    assert not two_sum.is_visible()
    page.locator("#matrix a", has_text="failed → pass").click()
    assert two_sum.is_visible()
    assert "feedback sent to the model" in two_sum.inner_text()
    assert "diff: first → repaired" in two_sum.inner_text()
    page.locator("#matrix a", has_text="rejected").click()
    merge = page.locator("div.candidate", has_text="merge_intervals")
    assert merge.is_visible() and "G001" in merge.inner_text()
    assert errors == []


def test_compare_page(page: Page, runs: list[Path], tmp_path: Path) -> None:
    out = tmp_path / "compare.html"
    result = subprocess.run(
        [CODETRIAL, "compare", str(runs[0]), str(runs[1]), "--out", str(out)],
        capture_output=True,
        text=True,
        env=CLI_ENV,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "McNemar" in result.stdout
    errors = _open(page, out)
    text = page.locator("#summary").inner_text()
    assert "Gained by B: two_sum, merge_intervals" in text and "Lost by B: palindrome" in text
    assert errors == []


def test_the_board_sorts_by_any_column_and_plots_size_against_score(
    page: Page, runs: list[Path], tmp_path: Path
) -> None:
    out = tmp_path / "board.html"
    models = [f"scripted/{run.parent.parent / f'script{i}.json'}" for i, run in enumerate(runs)]
    result = subprocess.run(
        [
            CODETRIAL,
            "board",
            *map(str, runs),
            "--out",
            str(out),
            "--size",
            f"{models[0]}=494M",
            "--size",
            f"{models[1]}=1.5B",
        ],
        capture_output=True,
        text=True,
        env=CLI_ENV,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    errors = _open(page, out)
    page.screenshot(path=str(tmp_path / "board.png"), full_page=True)
    board = page.locator("table.board")
    first_model = board.locator("tbody tr").first.locator("td").nth(1)
    assert first_model.inner_text() == models[1]  # 2 of 3 passed, above 1 of 3
    assert "-2 / +1 of 3, p = 1.000" in board.locator("tbody tr").nth(1).inner_text()
    board.locator("th", has_text="pass@1").click()
    assert first_model.inner_text() == models[0]
    board.locator("th", has_text="pass@1").click()
    assert first_model.inner_text() == models[1]
    board.locator("th", has_text="parameters").click()
    assert first_model.inner_text() == models[0]
    assert page.locator(".chart svg circle").count() == 2
    assert "parameters (log scale)" in page.locator(".chart svg").inner_html()
    assert errors == []


def test_selection_and_judge_sections_render(page: Page, runs: list[Path]) -> None:
    script = runs[0].parent.parent / "script0.json"
    for args in (
        ["select", "--strategies", "first,random,visible-tests,judge,oracle"],
        ["judge-eval", "--shots", "0"],
    ):
        result = subprocess.run(
            [CODETRIAL, args[0], str(runs[0]), *args[1:], "--judge", f"scripted/{script}"],
            capture_output=True,
            text=True,
            env=CLI_ENV,
            timeout=300,
        )
        assert result.returncode == 0, result.stderr
    errors = _open(page, runs[0] / "report.html")
    for selector in (
        "#selection table",
        "#selection .chart-selection svg",
        "#judge-eval table",
        "#judge-eval .chart-judge svg",
    ):
        assert page.locator(selector).first.is_visible(), selector
    assert "visible-tests" in page.locator("#selection table").inner_text()
    assert errors == []


def test_a_workspace_run_shows_aider_s_columns_and_per_file_diffs(
    page: Page, tmp_path: Path
) -> None:
    """Two exercises in the whole format: react passes on try 2 after a broken try 1
    that imports atexit (a suspect line, listed and counted), bowling never gets an
    edit that applies."""
    tasks = {t.id: t for t in load_exercism(POLYGLOT, "polyglot-python")}
    react = tasks["react"].reference[0][1]
    broken = "react.py\n```python\nimport atexit\nclass InputCell:\n    pass\n```\n"
    script = {
        "supplied files: react.py\n": [broken],
        "Fix the code in react.py ": [f"react.py\n```python\n{react}```\n"],
        "bowling.py": ["I cannot do that."],
    }
    path = tmp_path / "script.json"
    path.write_text(json.dumps(script))
    result = subprocess.run(
        [
            CODETRIAL,
            "run",
            "--model",
            f"scripted/{path}",
            "--suite",
            "polyglot-python",
            "--data",
            str(POLYGLOT),
            "--task",
            "react",
            "--task",
            "bowling",
            "--runs-dir",
            str(tmp_path / "runs"),
        ],
        capture_output=True,
        text=True,
        env=CLI_ENV,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    (run_dir,) = (tmp_path / "runs").iterdir()
    errors = _open(page, run_dir / "report.html")
    edits = page.locator("#edits table").inner_text()
    assert "0.0% [0.0, 0.0]" in edits and "50.0%" in edits and "whole" in edits
    assert page.locator("#matrix table").inner_text().count("trusted-side") == 2
    summary = page.locator("#summary table tbody tr").first.locator("td")
    assert [summary.nth(i).inner_text() for i in (6, 7)] == ["0", "1"]  # tampered, suspect
    suspect = page.locator("#suspects table tbody tr")
    assert suspect.count() == 1
    assert suspect.locator("td").nth(4).inner_text() == "react.py:1"
    assert "S006" in suspect.inner_text() and "import atexit" in suspect.inner_text()
    suspect.locator("a", has_text="react").click()
    assert page.locator("div.candidate", has_text="react · ").is_visible()
    page.locator("#matrix a", has_text="error → pass").click()
    candidate = page.locator("div.candidate", has_text="react · ")
    assert candidate.is_visible()
    changes = candidate.locator("pre.changes")
    assert "-    def __init__(self, initial_value):\n" in changes.first.inner_text()
    assert "+    pass" in changes.first.inner_text()
    assert "--- a/react.py" in changes.last.inner_text()
    assert "+    def add_watcher(self, cell):" in changes.last.inner_text()
    page.locator("#matrix a", has_text="malformed_edit").click()
    bowling = page.locator("div.candidate", has_text="bowling · ")
    assert "The edit could not be applied (no_edit)" in bowling.inner_text()
    assert errors == []


def test_a_repository_run_shows_swe_bench_s_counts_and_the_patches(
    page: Page, tmp_path: Path
) -> None:
    """The small repository of test_repository, judged from a predictions file: the
    gold patch resolves it, an empty patch does not."""
    instances = repository_instance(tmp_path / "repos", tmp_path)
    record = json.loads(instances.read_text())
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(
        json.dumps(
            {
                "instance_id": record["instance_id"],
                "model_name_or_path": "gold",
                "model_patch": record["patch"],
            }
        )
        + "\n"
        + json.dumps(
            {"instance_id": record["instance_id"], "model_name_or_path": "empty", "model_patch": ""}
        )
        + "\n"
    )
    result = subprocess.run(
        [
            CODETRIAL,
            "evaluate",
            str(predictions),
            "--suite",
            "swe",
            "--data",
            str(instances),
            "--repos",
            str(tmp_path / "repos"),
            "--wheels",
            str(SWE_WHEELS),
            "--runs-dir",
            str(tmp_path / "runs"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**CLI_ENV, "CODETRIAL_CACHE": str(tmp_path / "cache")},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    (run_dir,) = (tmp_path / "runs").iterdir()
    errors = _open(page, run_dir / "report.html")
    counts = page.locator("#repositories table.repositories").inner_text()
    assert "100.0% [100.0, 100.0]" in counts and "0.0% [0.0, 0.0]" in counts
    instances_table = page.locator("#repositories table.instances").inner_text()
    assert "1/1" in instances_table and "2/2" in instances_table and "empty" in instances_table
    page.locator("#repositories table.instances a").first.click()
    candidate = page.locator("div.candidate", has_text="acme__calc-1 · empty")
    assert candidate.is_visible()
    assert "(empty patch)" in candidate.locator("pre.changes").inner_text()
    gold = page.locator("div.candidate", has_text="acme__calc-1 · gold")
    assert "+    return a + b" in gold.locator("pre.changes").inner_text()
    assert "FAIL_TO_PASS" in gold.locator("table").inner_text()
    assert errors == []


def test_a_question_run_shows_each_round_with_its_chart(page: Page, tmp_path: Path) -> None:
    chart = (
        "import pandas as pd\nimport matplotlib.pyplot as plt\n"
        "s = pd.read_csv('/data/sales.csv')\n"
        "r = (s.units * s.unit_price).groupby(s.date.str[:7]).sum()\n"
        "plt.plot(r.index, r.values)\nplt.savefig('chart.png')\nprint(list(r.round(2)))\n"
    )
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            {
                "revenue (units × unit_price) of each month": [
                    fenced("import pandas\nprint(1/0)"),
                    fenced(chart),
                ],
                "The program failed": [fenced(chart)],
                "The program ran.": ["ANSWER: done"],
            }
        )
    )
    done = subprocess.run(
        [
            CODETRIAL,
            "run",
            "--suite",
            "dataqa",
            "--task",
            "sales-monthly-revenue-chart",
            "--model",
            f"scripted/{script}",
            "--mode",
            "fix",
            "--mode",
            "once",
            "--runs-dir",
            str(tmp_path / "runs"),
            "--wheels",
            str(DATA_WHEELS),
        ],
        capture_output=True,
        text=True,
        env=CLI_ENV,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    (run_dir,) = (tmp_path / "runs").iterdir()
    errors = _open(page, run_dir / "report.html")
    assert "1/1" in page.locator("#question-modes").inner_text()
    assert page.locator("#question-pairs").is_visible()
    page.locator("#questions a", has_text="(fix)").click()
    chain = page.locator("div.candidate:target")
    assert "ZeroDivisionError" in chain.inner_text() and "round 2" in chain.inner_text()
    image = chain.locator("img.chart-image")
    assert image.is_visible() and image.evaluate("i => i.naturalWidth") > 100
    assert errors == []


def test_every_outcome_has_a_colour_in_the_outcome_chart() -> None:
    """An outcome without one would be left out of the chart of how attempts ended."""
    assert set(OUTCOME_COLOURS) == {o.value for o in Outcome}
