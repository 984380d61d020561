"""The `codetrial` command: one module per command, errors mapped to exit codes; the
app and its entry point are in `codetrial.cli.app`."""

from codetrial.cli.app import app, main

__all__ = ["app", "main"]
