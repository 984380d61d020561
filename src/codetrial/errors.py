"""One exception hierarchy for the machinery.

A candidate failing is data (an Outcome), never an exception. These exceptions are
for the harness itself: bad configuration, bad input files, unreachable backends,
a sandbox that cannot start. Every message says what to do next. The CLI maps each
class to an exit code.
"""


class CodetrialError(Exception):
    """Base class; `exit_code` is what the CLI exits with."""

    exit_code = 1


class ConfigError(CodetrialError):
    """A run was configured in a way that cannot work (unknown model, bad option)."""

    exit_code = 2


class TaskFormatError(CodetrialError):
    """A task file or folder is malformed; the message names the path and the field."""

    exit_code = 3


class BackendUnavailable(CodetrialError):
    """The model backend cannot be reached or loaded at all; the run cannot go on."""

    exit_code = 4


class BackendRefused(BackendUnavailable):
    """The server answers but refuses the run's requests (HTTP 401, 403, 404): a wrong
    API key, model name or URL. Retrying cannot help, so like BackendUnavailable it
    stops the run with finished work saved; the message says what to fix."""

    exit_code = 8


class BackendError(CodetrialError):
    """One request to a model backend failed; the attempt is recorded as infra_error."""

    exit_code = 4


class PromptTooLong(BackendError):
    """The prompt cannot fit the model's context window: `prompt_tokens` and
    `context` (either None when the backend did not say). Asking again cannot help,
    and the model wrote nothing: the attempt is recorded as overflow, never retried."""

    def __init__(self, message: str, *, prompt_tokens: int | None, context: int | None) -> None:
        super().__init__(message)
        self.prompt_tokens = prompt_tokens
        self.context = context


class WeightsError(CodetrialError):
    """The embedded model's weights are missing or do not match their recorded hash."""

    exit_code = 5


class SandboxError(CodetrialError):
    """The sandbox could not start a run; never scored as a candidate failure."""

    exit_code = 6


class StoreError(CodetrialError):
    """The run directory is missing, unreadable, written by another store schema or
    belongs to a different run."""

    exit_code = 7


class RepositoryError(CodetrialError):
    """A repository task cannot be judged here: its clone or commit is missing, its
    test patch does not apply, or its package environment is not built. The task's or
    the machine's fault, never scored as a candidate failure."""

    exit_code = 9


class Interrupted(CodetrialError):
    """The user stopped a run (Ctrl-C); what finished is stored."""

    exit_code = 130
