"""Edit formats: how a model answers a workspace task, and how its answer is applied.

A workspace task gives the model files (an exercise's stub, say) and asks it to change
some of them. The model answers in an edit format, as aider's leaderboard measures
models: `whole` (every changed file in full), `diff` (SEARCH/REPLACE blocks) or
`udiff` (a unified diff). Each format is an `EditFormat` in `EDIT_FORMATS`:

    fmt = EDIT_FORMATS.get("diff")
    fmt.template                       # the instructions for the model
    fmt.apply(response, files, editable=["react.py"])   # Applied(...) or Malformed(...)

`apply` is pure: it reads nothing but its arguments and writes nothing. A response
that cannot be applied gives `Malformed` with a `kind` and a reason the model can act
on, never an exception.
"""

from codetrial.edits.base import EDIT_FORMATS, Applied, EditFormat, Malformed, MalformedKind

EDIT_FORMATS.declare("whole", "codetrial.edits.whole")
EDIT_FORMATS.declare("diff", "codetrial.edits.diff")
EDIT_FORMATS.declare("udiff", "codetrial.edits.udiff")

__all__ = ["EDIT_FORMATS", "Applied", "EditFormat", "Malformed", "MalformedKind"]
