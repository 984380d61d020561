"""The run store: a SQLite database, the manifest and the artifact tree of one run (see
`codetrial.store.runstore`)."""

from codetrial.store.manifest import SCHEMA_VERSION, Manifest, new_manifest
from codetrial.store.runstore import (
    MANIFEST,
    RunStore,
    find_runs,
    new_run_id,
)

__all__ = [
    "MANIFEST",
    "SCHEMA_VERSION",
    "Manifest",
    "RunStore",
    "find_runs",
    "new_manifest",
    "new_run_id",
]
