"""The contract every edit format keeps, and the workspace an edit is applied to.

An edit format turns a model's response into the new contents of the files it changes,
or into a `Malformed` value that says why it cannot be applied. A response that cannot
be applied is data, never an exception: only programming errors (a task that lists an
editable file it does not have, a task path outside its workspace) raise.

Paths are relative to the workspace, with forward slashes: `./a.py` is `a.py`; a path
with `..`, a backslash or a drive, or an absolute path, is refused. A model may write
only the files the task marks editable, or creates one the task lets it create; any
other path (a test file, a file the task does not list) is refused as forbidden_path,
and nothing at all is applied.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from enum import StrEnum

from codetrial.extract import without_reasoning
from codetrial.prompts import read_template, template_hashes
from codetrial.registry import Registry

_DRIVE = re.compile(r"^[A-Za-z]:")


class MalformedKind(StrEnum):
    NO_EDIT = "no_edit"  # the response holds no edit at all
    NO_MATCH = "no_match"  # a SEARCH text or a hunk is found nowhere in its file
    AMBIGUOUS = "ambiguous"  # an edit that could go to more than one place
    FORBIDDEN_PATH = "forbidden_path"  # a path the model may not write
    PARSE_ERROR = "parse_error"  # a block cut off, a marker missing or out of place


@dataclass(frozen=True)
class Applied:
    """The new content of every file the response changes, and of no other file."""

    files: dict[str, str]


@dataclass(frozen=True)
class Malformed:
    """Why a response cannot be applied, in words the model can act on in a repair."""

    kind: MalformedKind
    reason: str


def clip(text: str, limit: int = 80) -> str:
    """`text` on one line, shortened to `limit` characters, for quoting in a reason."""
    flat = text.replace("\n", "\\n")
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def normalise(path: str) -> str | None:
    """`path` in canonical relative form, or None when it is not inside the workspace."""
    if not path or "\\" in path or "\0" in path or path.startswith("/") or _DRIVE.match(path):
        return None
    parts = [part for part in path.split("/") if part not in ("", ".")]
    if not parts or ".." in parts:
        return None
    return "/".join(parts)


def _canonical(path: str) -> str:
    normal = normalise(path)
    if normal is None:
        raise ValueError(f"task path {path!r} is not a relative path inside the workspace")
    return normal


@dataclass(frozen=True)
class Workspace:
    """A task's files (line ends as "\\n") and which of them a response may write."""

    files: Mapping[str, str]
    editable: frozenset[str]
    creatable: frozenset[str]
    crlf: frozenset[str]  # files that use "\r\n"; they get it back when changed

    @classmethod
    def of(
        cls, files: Mapping[str, str], editable: Collection[str], creatable: Collection[str]
    ) -> Workspace:
        texts = {_canonical(path): text for path, text in files.items()}
        writable = frozenset(_canonical(path) for path in editable)
        missing = sorted(writable - texts.keys())
        if missing:
            raise ValueError(f"editable paths {missing} are not among the task's files")
        return cls(
            files={path: text.replace("\r\n", "\n") for path, text in texts.items()},
            editable=writable,
            creatable=frozenset(_canonical(path) for path in creatable),
            crlf=frozenset(path for path, text in texts.items() if "\r\n" in text),
        )

    def sole_editable(self) -> str | None:
        """The one file an unnamed edit can only be for, when there is exactly one."""
        return next(iter(self.editable)) if len(self.editable) == 1 else None

    def knows(self, claim: str) -> bool:
        path = normalise(claim)
        return path is not None and (path in self.files or path in self.creatable)

    def writable(self, claim: str) -> str | Malformed:
        """The canonical path of `claim` when the model may write it; else why not."""
        path = normalise(claim)
        if path is None:
            return Malformed(
                MalformedKind.FORBIDDEN_PATH,
                f"{clip(claim)!r} is not a path inside the workspace: write paths relative "
                f"to it, with forward slashes and no '..'; {self._allowed()}",
            )
        if path in self.editable or path in self.creatable:
            return path
        verdict = "may not be changed" if path in self.files else "is not a file of this task"
        return Malformed(MalformedKind.FORBIDDEN_PATH, f"{clip(path)} {verdict}; {self._allowed()}")

    def _allowed(self) -> str:
        editable = ", ".join(sorted(self.editable)) or "none"
        creatable = ", ".join(sorted(self.creatable))
        creatable = f"; you may create: {creatable}" if creatable else ""
        return clip(f"the files you may edit are: {editable}{creatable}", 300)

    def finish(self, contents: Mapping[str, str]) -> Applied:
        """The files of `contents` whose text differs from what the workspace holds."""
        changed = {
            path: text.replace("\n", "\r\n") if path in self.crlf else text
            for path, text in contents.items()
            if self.files.get(path) != text
        }
        return Applied(changed)


Edit = Callable[[str, Workspace], Applied | Malformed]


@dataclass(frozen=True)
class EditFormat:
    """A named edit format: the instructions the model is given, and how to apply its answer.

    `edit` receives the response with reasoning (`<think>...</think>`) removed and every
    line end turned into "\\n".
    """

    name: str
    edit: Edit

    @property
    def template(self) -> str:
        """The prompt text that tells the model how to answer in this format."""
        return read_template(self._file)

    @property
    def template_sha256(self) -> str:
        return template_hashes((self._file,))[self._file]

    @property
    def _file(self) -> str:
        return f"edits/{self.name}.md"

    def apply(
        self,
        response: str,
        files: Mapping[str, str],
        editable: Collection[str],
        creatable: Collection[str] = (),
    ) -> Applied | Malformed:
        """The files `response` changes, given the task's `files` (path -> content), the
        paths the model may change and those it may create; or why it cannot be applied."""
        workspace = Workspace.of(files, editable, creatable)
        text = without_reasoning(response).replace("\r\n", "\n").replace("\r", "\n")
        return self.edit(text, workspace)


EDIT_FORMATS: Registry[EditFormat] = Registry("edit format")
