"""Questions answered by programs: answer checking, the interpreter loop on the
scripted backend in a real sandbox, the dataqa suite's references, and `codetrial ask`."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import pytest

from codetrial import api
from codetrial.errors import ConfigError
from codetrial.records import Outcome
from codetrial.store.artifacts import outputs_dir
from codetrial.tasks import QuestionTask, load_suite
from codetrial.tasks.questions import Answer
from codetrial.verdict.answers import check, final_answer
from tests.conftest import CLI_ENV, CODETRIAL, DATA_WHEELS, fenced

SALES_QUESTION = "How many orders in sales.csv have 10 or more units"
CHART_QUESTION = "Compute the total revenue (units × unit_price) of each month"
CHART = (
    "import pandas as pd\nimport matplotlib.pyplot as plt\n"
    "s = pd.read_csv('/data/sales.csv')\n"
    "r = (s.units * s.unit_price).groupby(s.date.str[:7]).sum()\n"
    "plt.plot(r.index, r.values)\nplt.savefig('chart.png')\nprint(list(r.round(2)))\n"
)


@pytest.mark.parametrize(
    ("answer", "reply", "correct"),
    [
        (Answer("number", 8), "The program printed 8.\nANSWER: 8", True),
        (Answer("number", 2221.83, 0.01), "**Answer:** $2,221.83.", True),
        (Answer("number", 2221.83, 0.01), "ANSWER: 2221.9", False),
        (Answer("number", 8), "I cannot tell.", False),
        (Answer("string", "April"), "ANSWER: `april`", True),
        (Answer("string", "April"), "ANSWER: March", False),
        (Answer("list", ["Lyon", "Paris"]), "ANSWER: Lyon, Paris", True),
        (Answer("list", ["Lyon", "Paris"]), "ANSWER: Paris, Lyon", False),
        (Answer("list", ["Lyon", "Paris"], ordered=False), "ANSWER: Paris, Lyon", True),
        (Answer("list", [1007, 1025], 0.0), 'ANSWER: ["1007", "1025"]', True),
        (Answer("list", [1007, 1025], 0.0), "ANSWER: 1007", False),
    ],
)
def test_answers_are_checked_on_the_trusted_side(answer: Answer, reply: str, correct: bool) -> None:
    assert check(answer, reply, (), ()).correct is correct


def test_a_chart_is_checked_from_the_file_and_the_figure_saved_to_it() -> None:
    answer = Answer("series", [1.0, 2.5], 0.01, file="chart.png")
    figure = [{"file": "chart.png", "axes": [{"title": "", "series": [{"y": [1.0, 2.5]}]}]}]
    assert check(answer, "ANSWER: whatever it printed", {"chart.png"}, figure).correct
    assert not check(answer, "", set(), figure).correct  # the file is not there
    other = [{"file": "chart.png", "axes": [{"title": "", "series": [{"y": [1.0, 9.0]}]}]}]
    assert "no series" in check(answer, "", {"chart.png"}, other).why
    assert final_answer("Some words.\nANSWER: 42.\n") == "42"


def test_the_dataqa_suite_and_its_references() -> None:
    tasks = load_suite("dataqa")
    assert len(tasks) >= 30 and all(isinstance(t, QuestionTask) for t in tasks)
    kinds = {t.answer.kind for t in tasks if isinstance(t, QuestionTask) and t.answer}
    assert kinds == {"number", "string", "list", "series"}
    done = subprocess.run(
        [CODETRIAL, "check", "--references", "--suite", "dataqa", "--wheels", str(DATA_WHEELS)],
        capture_output=True,
        text=True,
        env=CLI_ENV,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("passed") == len(tasks)


def script(tmp_path: Path, responses: dict[str, list[str]]) -> str:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(responses))
    return f"scripted/{path}"


def test_an_error_round_then_a_fix_in_three_modes(tmp_path: Path) -> None:
    broken = "import pandas as pd\ns = pd.read_csv('/data/sales.csv')\nprint(s['unitz'].sum())\n"
    fixed = (
        "import pandas as pd\ns = pd.read_csv('/data/sales.csv')\nprint((s.units >= 10).sum())\n"
    )
    model = script(
        tmp_path,
        {  # the first key found in the prompt answers it
            "failed. Its output": ["ANSWER: 3"],
            SALES_QUESTION: [fenced(broken)],
            "The program failed": [fenced(fixed)],
            "The program ran.": ["The count is 8.\nANSWER: 8"],
            CHART_QUESTION: [fenced(CHART)],
            "Answer without writing code": ["ANSWER: 7"],
        },
    )
    result = api.run(
        "dataqa",
        [model],
        runs_dir=tmp_path / "runs",
        wheels=DATA_WHEELS,
        task_ids=["sales-orders-10-plus-units", "sales-monthly-revenue-chart"],
        modes=["direct", "once", "fix"],
    )
    chains = {(r.model.split(" ")[-1], r.task_id): r for r in result.results()}
    sales = chains[("(fix)", "sales-orders-10-plus-units")]
    assert sales.first.outcome is Outcome.ERROR and sales.first.program is not None
    assert sales.first.program.raised and sales.first.program.raised["type"] == "KeyError"
    assert "KeyError" in sales.repairs[0].messages[3]["content"]  # the fix request
    assert sales.final.outcome is Outcome.PASSED and sales.final.program is not None
    assert sales.final.program.answer == "8"
    once = chains[("(once)", "sales-orders-10-plus-units")]
    assert once.final.outcome is Outcome.FAILED and once.final.program is not None
    assert once.final.program.answer == "3" and not once.repairs  # answered from the error
    assert "KeyError" in (once.final.program.failed or "")
    assert chains[("(direct)", "sales-orders-10-plus-units")].final.outcome is Outcome.FAILED
    chart = chains[("(once)", "sales-monthly-revenue-chart")]
    assert chart.final.outcome is Outcome.PASSED and chart.final.program is not None
    assert chart.final.program.files == ["chart.png"]
    outputs = outputs_dir(result.path, chart.model, chart.task_id, 0)
    assert (outputs / "chart.png").read_bytes().startswith(b"\x89PNG")
    document = json.loads((result.path / "results.json").read_text())
    modes = {row["label"].split(" ")[-1]: row for row in document["questions"]["modes"]}
    assert [modes[m]["failed_first"] for m in ("(direct)", "(once)", "(fix)")] == [0, 1, 1]
    fix_gain = document["questions"]["fix_gains"][0]
    assert fix_gain == {"model": model, "gained": 1, "lost": 0, "from_failed_programs": 1}
    html = (result.path / "report.html").read_text()
    assert 'class="chart-image" src="data:image/png;base64,' in html


def test_no_code_and_the_gate_are_outcomes_a_fix_can_follow(tmp_path: Path) -> None:
    shell = "import subprocess\nprint(subprocess.run(['ls']))\n"
    right = "import pandas as pd\nprint((pd.read_csv('/data/sales.csv').units >= 10).sum())\n"
    model = script(
        tmp_path,
        {
            SALES_QUESTION: ["I would count them."],
            "no ```python block": [fenced(shell)],
            "Rejected by the policy gate": [fenced(right)],
            "The program ran.": ["ANSWER: 8"],
        },
    )
    result = api.run(
        "dataqa",
        [model],
        runs_dir=tmp_path / "runs",
        wheels=DATA_WHEELS,
        task_ids=["sales-orders-10-plus-units"],
    )
    (chain,) = result.results()
    outcomes = [a.outcome for a in chain.attempts]
    assert outcomes == [Outcome.NO_CODE, Outcome.REJECTED, Outcome.PASSED]
    assert chain.repairs[0].gate_rule is None  # a rejection is told, not run
    assert "G001" in chain.repairs[1].messages[5]["content"]  # the second fix request


def test_a_reply_cut_off_is_said_to_be_in_every_mode(tmp_path: Path) -> None:
    """A program's reply cut off at --max-tokens says so in its detail, in the fix
    request that follows it, and in the modes' cut-off counts."""
    right = "import pandas as pd\nprint((pd.read_csv('/data/sales.csv').units >= 10).sum())\n"
    model = script(
        tmp_path,
        {
            SALES_QUESTION: ["I will explain first. " * 20 + fenced(right)],
            "no ```python block": [fenced(right)],
            "The program ran.": ["ANSWER: 8"],
        },
    )
    result = api.run(
        "dataqa",
        [model],
        runs_dir=tmp_path / "runs",
        wheels=DATA_WHEELS,
        task_ids=["sales-orders-10-plus-units"],
        modes=["direct", "fix"],
        max_tokens=50,
        efficiency=False,
    )
    chains = {r.model.split(" ")[-1]: r for r in result.results()}
    direct, fix = chains["(direct)"], chains["(fix)"]
    assert direct.first.finish_reason == "length" and fix.first.finish_reason == "length"
    assert direct.first.detail.startswith("reply cut off at 50 tokens (the limit); ")
    assert fix.first.outcome is Outcome.NO_CODE
    assert fix.first.detail.startswith("reply cut off at 50 tokens (the limit); ")
    told = "Your reply was cut off at 50 tokens (the limit);"
    assert told in fix.repairs[0].messages[3]["content"]  # the fix request
    assert fix.final.outcome is Outcome.PASSED and fix.final.finish_reason == "stop"
    summary = json.loads((result.path / "results.json").read_text())["summary"]
    assert [row["cut_off"] for row in summary] == [1, 1]


def test_ask_about_a_file_of_ones_own(tmp_path: Path) -> None:
    data = tmp_path / "mine.csv"
    data.write_text("city,sales\nParis,10\nLyon,7\nParis,4\n")
    program = (
        "import pandas as pd\n"
        "print(pd.read_csv('/data/mine.csv').groupby('city').sales.sum().idxmax())\n"
    )
    model = script(
        tmp_path, {"Question: Which city": [fenced(program)], "The program ran.": ["ANSWER: Paris"]}
    )
    done = subprocess.run(
        [
            CODETRIAL,
            "ask",
            "Which city sold the most?",
            "--file",
            str(data),
            "--model",
            model,
            "--runs-dir",
            str(tmp_path / "runs"),
            "--wheels",
            str(DATA_WHEELS),
            "--json",
        ],
        capture_output=True,
        text=True,
        env=CLI_ENV,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["answer"] == "Paris" and document["outcome"] == "answered"
    assert "round 1: answered" in done.stderr
    (question,) = (tmp_path / "runs" / ".questions").iterdir()
    assert (question / "data" / "mine.csv").read_text() == data.read_text()


def test_an_answer_is_printed_as_the_model_wrote_it(tmp_path: Path) -> None:
    """What a model writes is not console markup: brackets stay, a stray closing tag
    is text, not a traceback."""
    data = tmp_path / "mine.csv"
    data.write_text("city,sales\nParis,10\n")
    answer = "Paris [/x] [bold]codetrial[ray][/bold]"
    program = fenced("print(open('/data/mine.csv').read())\n")
    model = script(
        tmp_path, {"Question: Which city": [program], "The program ran.": [f"ANSWER: {answer}"]}
    )
    done = subprocess.run(
        [
            CODETRIAL,
            "ask",
            "Which city sold the most?",
            "--file",
            str(data),
            "--model",
            model,
            "--runs-dir",
            str(tmp_path / "runs"),
            "--wheels",
            str(DATA_WHEELS),
        ],
        capture_output=True,
        text=True,
        env={**CLI_ENV, "COLUMNS": "200"},
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert f"answer: {answer}" in done.stdout


@pytest.mark.parametrize(
    ("question", "name", "content", "message"),
    [
        ("How many?", "missing.csv", None, "no file"),
        ("How many?", "image.bin", b"\x89PNG\r\n\x1a\n\0\0\0", "not a text file"),
        ("  ", "data.csv", b"a\n1\n", "the question is empty"),
    ],
)
def test_bad_input_is_told(
    tmp_path: Path, question: str, name: str, content: bytes | None, message: str
) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(ConfigError, match=message):
        api.ask(question, [path], "scripted/none.json", runs_dir=tmp_path / "runs")
    done = subprocess.run(
        [CODETRIAL, "ask", question, "--file", str(path)],
        capture_output=True,
        text=True,
        env=CLI_ENV,
        timeout=60,
        cwd=tmp_path,
    )
    assert done.returncode == ConfigError.exit_code and message in " ".join(done.stderr.split())
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("answer", "reply"),
    [
        (Answer("number", 8), "ANSWER: 8 or 9"),
        (Answer("number", 8), "ANSWER: store S8"),
        (Answer("number", 7), "ANSWER: between 7 and 12"),
        (Answer("number", 123), "ANSWER: 1, 2, 3"),
        (Answer("list", ["a", "b"], ordered=False), "ANSWER: a, b, b"),
    ],
)
def test_a_reply_that_hedges_is_not_right(answer: Answer, reply: str) -> None:
    assert not check(answer, reply, (), ()).correct


def test_unordered_numbers_match_by_value() -> None:
    answer = Answer("list", [2, 10], 0.01, ordered=False)
    assert check(answer, "ANSWER: 9.999, 2.0", (), ()).correct


def test_what_a_program_forges_cannot_break_the_trusted_side(tmp_path: Path) -> None:
    forging = (
        "import json, os\nopen(b'x\\xff.png', 'wb').write(b'x')\n"
        "os.makedirs('sub', exist_ok=True)\nopen('sub/kept.txt', 'w').write('k')\n"
        "bad = {'axes': [1, {'series': [{'y': ['a', 1e999]}]}]}\n"
        "json.dump(bad, open('../figures.json', 'w'))\n"
        "json.dump([[[[]]]], open('../raised.json', 'w'))\nos._exit(0)\n"
    )
    model = script(tmp_path, {SALES_QUESTION: [fenced(forging)], "The program ran.": ["ANSWER: 8"]})
    result = api.run(
        "dataqa",
        [model],
        runs_dir=tmp_path / "runs",
        wheels=DATA_WHEELS,
        task_ids=["sales-orders-10-plus-units"],
    )
    (chain,) = result.results()
    assert chain.final.outcome is Outcome.PASSED and chain.final.program is not None
    assert chain.final.program.files == ["sub/kept.txt"]
    assert chain.final.program.figures == [] and chain.final.program.raised is None
    assert chain.final.program.skipped == ["x?.png"]  # its name is not UTF-8


def test_a_chart_saved_by_its_absolute_path_counts(tmp_path: Path) -> None:
    absolute = CHART.replace(
        "plt.savefig('chart.png')", "plt.savefig(os.path.abspath('chart.png'))"
    )
    model = script(
        tmp_path,
        {CHART_QUESTION: [fenced("import os\n" + absolute)], "The program ran.": ["ANSWER: done"]},
    )
    result = api.run(
        "dataqa",
        [model],
        runs_dir=tmp_path / "runs",
        wheels=DATA_WHEELS,
        task_ids=["sales-monthly-revenue-chart"],
    )
    assert result.results()[0].final.outcome is Outcome.PASSED


def test_a_chain_cut_short_is_resumed_at_its_next_round(tmp_path: Path) -> None:
    broken = "print(1/0)\n"
    right = "import pandas as pd\nprint((pd.read_csv('/data/sales.csv').units >= 10).sum())\n"
    model = script(
        tmp_path,
        {
            SALES_QUESTION: [fenced(broken)],
            "The program failed": [fenced(right)],
            "The program ran.": ["ANSWER: 8"],
        },
    )
    result = api.run(
        "dataqa",
        [model],
        runs_dir=tmp_path / "runs",
        wheels=DATA_WHEELS,
        task_ids=["sales-orders-10-plus-units"],
    )
    (chain,) = result.results()
    assert [a.outcome for a in chain.attempts] == [Outcome.ERROR, Outcome.PASSED]
    with sqlite3.connect(result.path / "trial.sqlite") as db:  # as if stopped after round 1
        assert db.execute("SELECT DISTINCT model, mode FROM attempts").fetchall() == [
            (model, "fix")
        ]
        db.execute("DELETE FROM attempts WHERE attempt = 1")
    (tmp_path / "script.json").write_text(
        json.dumps(
            {
                SALES_QUESTION: [fenced("print('asked again')")],
                "The program failed": [fenced(right)],
                "The program ran.": ["ANSWER: 8"],
            }
        )
    )
    (chain,) = api.run(resume=result.path).results()
    assert [a.outcome for a in chain.attempts] == [Outcome.ERROR, Outcome.PASSED]
    assert chain.first.code == broken and chain.final.code == right
    fix_request = chain.final.messages[3]["content"]
    assert "ZeroDivisionError" in fix_request  # the stored round's error, told again
    assert chain.final.mode == "fix" and chain.model == f"{model} (fix)"


def test_questions_are_asked_once_per_mode() -> None:
    with pytest.raises(ConfigError, match="--samples is for"):
        api.configure("dataqa", samples=3)
