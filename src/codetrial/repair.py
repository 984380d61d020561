"""The bounded repair loop's decisions: whether to try again, and with what prompt.

A repair sees the original spec, the failed code and feedback from the visible tests
(or the gate, or the parser) only. A workspace task's next try follows aider's
protocol: the conversation so far, the files as the last try left them and the
trimmed output of the task's tests (which the model never sees themselves); so does a
repository task's, with the output of its FAIL_TO_PASS and PASS_TO_PASS tests.

Hidden tests never reach a model: a candidate that passes the visible tests and
fails hidden ones gives the model nothing it may see, so it is not repaired.
"""

from __future__ import annotations

from codetrial.prompts import repair_messages, workspace_repair_messages
from codetrial.records import AttemptRecord, Message, Outcome
from codetrial.tasks import Task, WorkspaceTask


def needs_repair(previous: AttemptRecord, attempts_allowed: int) -> bool:
    return (
        previous.outcome not in (Outcome.PASSED, Outcome.INFRA_ERROR)
        and previous.feedback is not None
        and previous.attempt < attempts_allowed
    )


def repair_prompt(
    task: Task | WorkspaceTask, system: Message, previous: AttemptRecord
) -> list[Message]:
    """The next try's messages; `task` as the model sees it (a repository task's view)."""
    assert previous.feedback is not None
    if isinstance(task, WorkspaceTask):
        assert previous.files is not None
        messages = [Message(m["role"], m["content"]) for m in previous.messages]
        return workspace_repair_messages(
            task, messages, previous.raw_response, previous.files, previous.feedback
        )
    code = previous.code if previous.code is not None else "(no code was found in the response)"
    return repair_messages(task, system, code, previous.feedback)
