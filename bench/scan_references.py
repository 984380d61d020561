"""False alarms of the static scan on code known to be honest.

Scans the reference solutions of the aider Python exercises (each reference against
its exercise's stub, as a workspace candidate is scanned, and each reference file read
whole as if it were new) and the gold and test patches of the swe-mini repository
fixtures (as a repository candidate's patch is scanned). Prints every finding, the
hunks no cut of which parses (lines the scan cannot see), and the totals.
Usage: python -m bench.scan_references [POLYGLOT_FOLDER]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from codetrial.gate.scan import scan_files, scan_patch, unread
from codetrial.records import Suspect
from codetrial.tasks.workspace import load_exercism

ROOT = Path(__file__).resolve().parents[1]
SWE_MINI = ROOT / "tests" / "fixtures" / "swe-mini" / "instances.jsonl"
POLYGLOT = ROOT.parent / "shared" / "data" / "polyglot-python"


def shown(where: str, suspect: Suspect) -> str:
    return f"{where}: {suspect.path}:{suspect.line} {suspect.rule} {suspect.message}"


def main(polyglot: Path) -> int:
    tasks = load_exercism(polyglot, "polyglot-python")
    references = findings = 0
    for task in tasks:
        given, reference = dict(task.files), dict(task.reference)
        references += len(reference)
        for found in (scan_files(given, given | reference), scan_files({}, reference)):
            findings += len(found)
            for suspect in found:
                print(shown(f"polyglot {task.id}", suspect))
    print(f"aider Python exercises: {len(tasks)} tasks, {references} references, {findings} found")
    patches = hunks_unread = findings = 0
    for line in SWE_MINI.read_text().splitlines():
        instance = json.loads(line)
        for name in ("patch", "test_patch"):
            patches += 1
            where = f"swe-mini {instance['instance_id']} {name}"
            found = scan_patch(instance[name])
            findings += len(found)
            for suspect in found:
                print(shown(where, suspect))
            for path, first in unread(instance[name]):
                hunks_unread += 1
                print(f"{where}: the hunk at {path}:{first} is unread")
    print(
        f"swe-mini: {patches} patches (gold, test), {findings} found, {hunks_unread} hunks unread"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else POLYGLOT))
