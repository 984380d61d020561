"""The package's import graph has no cycles, and no module imports a layer above its own.

Every import of a codetrial module is an edge: at a module's top, inside a function, and
inside `if TYPE_CHECKING:`. An import inside a function only puts off the cycle to the
first call; an import for type checking still means neither module can be read, moved
or tested without the other, and mypy follows it as Python follows the others.

An edge goes to the module the statement names: `import codetrial.a.b` to
`codetrial.a.b`; `from codetrial.a import name` to `codetrial.a`, the package's
`__init__`, whose namespace the name is read from, and to `codetrial.a.name` too when
that is a module. Relative imports are resolved first. Importing `codetrial.a.b` also
runs the `__init__` of each package above it that the importer is not inside, so those
are edges too: a module outside `a` that imports `a.b` depends on everything
`a/__init__` imports. From inside `a` it does not (the package is already being
imported), so `a/__init__` may re-export its submodules; but a submodule that imports
anything from its own package's `__init__`, a sibling module included (`from
codetrial.a import sibling`), is on a cycle with it, and should import the sibling
itself (`import codetrial.a.sibling as sibling`, or names from it).

A registry's `declare(name, "codetrial.a.b")` is an edge too: the registry imports that
module by name, inside a function, the first time the name is asked for. So a module
that declares another's name must not be imported by it: the names are declared where
the implementations' own imports do not lead, as a package's `__init__` declares what
its submodules register in a registry they import from a sibling.
"""

from __future__ import annotations

import ast
import functools
import textwrap
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import pytest

import codetrial

PACKAGE = Path(codetrial.__file__).parent
# Task folders of the built-in suites hold candidates' tests and references: data that
# runs in a sandbox, not modules of the package.
DATA = PACKAGE / "tasks" / "suites"

# The layers, lowest first. A module may import modules of its own layer and of the
# layers below it, never of a layer above. A name stands for that module and, for a
# package, every module in it; the longest name that matches a module places it.
# `codetrial` is the package's own __init__: the public names, imported when first used.
# Where the data flow alone would not place them: the sandbox is below tasks, for it
# knows none; prompts are below models, whose batched reader cuts a prompt where
# `prompts.PART` marks it; the kinds of task are above everything a trial's stage does
# to a task (prompts, candidates, the gate, the verdict, what a repository task shows)
# and below the store, which asks a task's kind what to keep; report and runs are just
# above the store, for they are built from it alone.
LAYERS = """
foundation  errors records config registry version syntax literals extras progress metrics
sandbox     sandbox
tasks       tasks
prompts     prompts
models      models
candidates  extract edits
gate        gate
verdict     verdict environments
shown       localize
kinds       kinds
store       store
report      report runs
stages      repair harden selection
executors   executors
judging     samples predictions checks rerun harden.audit harden.suite
pipeline    pipeline
api         api
sweep       sweep
facade      codetrial
cli         cli
"""


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    line: int

    def __str__(self) -> str:
        return f"{self.source} (line {self.line}) imports {self.target}"


def module_files(package: Path, data: Path | None = None) -> dict[str, Path]:
    """Every module under `package` by dotted name, leaving out those under `data`; a
    package is its `__init__`."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        if data is not None and path.is_relative_to(data):
            continue
        parts = path.relative_to(package.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _named(target: str, modules: dict[str, Path]) -> str | None:
    """The module `target` names: itself, or the closest package above it that exists."""
    parts = target.split(".")
    while parts and ".".join(parts) not in modules:
        parts.pop()
    return ".".join(parts) or None


def _base(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The absolute module a `from ... import` statement imports from."""
    if not node.level:
        return node.module or ""
    parts = module.split(".") if is_package else module.split(".")[:-1]
    parts = parts[: len(parts) - (node.level - 1)]
    return ".".join([*parts, node.module] if node.module else parts)


def _entered(importer: str, target: str) -> list[str]:
    """The packages above `target` whose `__init__` an import of it runs first: those
    that `importer` is not inside, outermost first."""
    parts = target.split(".")
    above = [".".join(parts[:n]) for n in range(1, len(parts))]
    return [p for p in above if importer != p and not importer.startswith(p + ".")]


def _declared(node: ast.AST) -> bool:
    """Whether `node` is a registry's `declare(name, "module")`."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "declare"
        and len(node.args) == 2
        and isinstance(node.args[1], ast.Constant)
        and isinstance(node.args[1].value, str)
    )


def edges_of(module: str, path: Path, modules: dict[str, Path]) -> list[Edge]:
    is_package = path.name == "__init__.py"
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        targets: list[str | None] = []
        if isinstance(node, ast.Import):
            targets = [_named(alias.name, modules) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _base(node, module, is_package)
            named = [f"{base}.{alias.name}" for alias in node.names]
            package = _named(base, modules)
            targets = [package] if package != module else []
            targets += [name for name in named if name in modules]
        elif _declared(node):
            targets = [_named(node.args[1].value, modules)]  # type: ignore[attr-defined]
        for target in filter(None, targets):
            entered = [*_entered(module, target), target]
            found += [Edge(module, name, node.lineno) for name in entered]
    return found


@functools.cache
def import_graph(package: Path = PACKAGE, data: Path | None = DATA) -> dict[str, list[Edge]]:
    """Each module's edges to modules of the package, in the order they appear."""
    modules = module_files(package, data)
    return {name: edges_of(name, path, modules) for name, path in modules.items()}


def components(graph: dict[str, list[Edge]]) -> list[list[str]]:
    """The strongly connected components (Tarjan's algorithm), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for edge in graph[node]:
            if edge.target not in index:
                visit(edge.target)
                low[node] = min(low[node], low[edge.target])
            elif edge.target in on_stack:
                low[node] = min(low[node], index[edge.target])
        if low[node] == index[node]:
            members = []
            while not members or members[-1] != node:
                members.append(stack.pop())
                on_stack.discard(members[-1])
            found.append(sorted(members))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def shortest_cycle(graph: dict[str, list[Edge]], start: str, within: set[str]) -> list[Edge]:
    """The fewest edges that lead from `start` back to it, staying `within` a component."""
    came: dict[str, Edge] = {}
    queue = deque([start])
    while queue:
        for edge in graph[queue.popleft()]:
            if edge.target == start:
                path = [edge]
                while path[0].source != start:
                    path.insert(0, came[path[0].source])
                return path
            if edge.target in within and edge.target not in came:
                came[edge.target] = edge
                queue.append(edge.target)
    raise AssertionError(f"{start} is on no cycle within {sorted(within)}")


def cycles(graph: dict[str, list[Edge]]) -> list[list[Edge]]:
    """A shortest cycle through each module that is on one (in a component of more than
    one module, or importing itself), each cycle listed once."""
    found: list[list[Edge]] = []
    seen: set[frozenset[tuple[str, str]]] = set()
    for component in components(graph):
        for module in component:
            if len(component) == 1 and all(e.target != module for e in graph[module]):
                continue
            cycle = shortest_cycle(graph, module, set(component))
            key = frozenset((e.source, e.target) for e in cycle)
            if key not in seen:
                seen.add(key)
                found.append(cycle)
    return found


def describe(cycle: list[Edge]) -> str:
    steps = "".join(f"\n    {edge}" for edge in cycle)
    return " -> ".join([*(e.source for e in cycle), cycle[0].source]) + steps


@functools.cache
def layers(table: str = LAYERS) -> dict[str, tuple[int, str]]:
    """Each name of the table with its layer's number (0 lowest) and name."""
    placed = {}
    for number, row in enumerate(table.strip().splitlines()):
        layer, *names = row.split()
        for name in names:
            assert name not in placed, f"{name} is in two layers"
            placed[name if name == "codetrial" else f"codetrial.{name}"] = (number, layer)
    return placed


def layer_of(module: str, placed: dict[str, tuple[int, str]]) -> tuple[int, str] | None:
    """The layer of the longest name that is `module` or a package above it."""
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        name = ".".join(parts[:n])
        if name in placed and (name != "codetrial" or module == "codetrial"):
            return placed[name]
    return None


def upward(graph: dict[str, list[Edge]], placed: dict[str, tuple[int, str]]) -> list[str]:
    """Every edge to a module of a higher layer, described."""
    found = []
    for edges in graph.values():
        for edge in edges:
            source, target = layer_of(edge.source, placed), layer_of(edge.target, placed)
            if source is not None and target is not None and target[0] > source[0]:
                found.append(f"{edge}: layer {source[1]} imports layer {target[1]} above it")
    return found


def _package(root: Path, files: dict[str, str]) -> dict[str, list[Edge]]:
    for name, text in files.items():
        path = root / "pkg" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return import_graph(root / "pkg", data=None)


def _targets(graph: dict[str, list[Edge]], module: str) -> set[str]:
    return {edge.target for edge in graph[module]}


def test_imports_in_functions_and_for_type_checking_are_edges(tmp_path: Path) -> None:
    graph = _package(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "def f():\n    from pkg.b import g\n",
            "b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg.a\n",
        },
    )
    assert _targets(graph, "pkg.a") == {"pkg.b"} and _targets(graph, "pkg.b") == {"pkg.a"}
    (cycle,) = cycles(graph)
    assert describe(cycle) == (
        "pkg.a -> pkg.b -> pkg.a\n    pkg.a (line 2) imports pkg.b\n"
        "    pkg.b (line 3) imports pkg.a"
    )


def test_a_module_a_registry_declares_is_an_edge(tmp_path: Path) -> None:
    """Declared beside the registry its implementations import, a name closes a
    cycle; declared in the package's `__init__`, it does not."""
    registry = "from pkg.registry import Registry\nKINDS = Registry()\n"
    declared = "from pkg.flat.base import KINDS\nKINDS.declare('one', 'pkg.flat.one')\n"
    graph = _package(
        tmp_path,
        {
            "__init__.py": "",
            "registry.py": "class Registry: ...\n",
            "loop/__init__.py": "",
            "loop/base.py": f"{registry}KINDS.declare('one', 'pkg.loop.one')\n",
            "loop/one.py": "from pkg.loop.base import KINDS\n",
            "flat/__init__.py": declared,
            "flat/base.py": registry,
            "flat/one.py": "from pkg.flat.base import KINDS\n",
        },
    )
    assert "pkg.loop.one" in _targets(graph, "pkg.loop.base")
    assert [describe(c).splitlines()[0] for c in cycles(graph)] == [
        "pkg.loop.base -> pkg.loop.one -> pkg.loop.base"
    ]


def test_relative_imports_resolve_to_the_module_or_the_package_they_name(
    tmp_path: Path,
) -> None:
    graph = _package(
        tmp_path,
        {
            "__init__.py": "",
            "sub/__init__.py": "from . import a\nfrom .a import thing\n",
            "sub/a.py": "from . import thing\nfrom .. import other\nfrom ..top import x\n",
            "top.py": "",
        },
    )
    assert _targets(graph, "pkg.sub") == {"pkg.sub.a"}
    assert _targets(graph, "pkg.sub.a") == {"pkg.sub", "pkg", "pkg.top"}


@pytest.mark.parametrize(
    ("sibling", "found"),
    [
        ("import pkg.sub.codec as codec", []),
        ("from pkg.sub.codec import encode", []),
        ("from pkg.sub import codec", ["pkg.sub -> pkg.sub.server -> pkg.sub"]),
    ],
)
def test_a_package_that_re_exports_its_submodules_is_on_a_cycle_only_through_its_namespace(
    tmp_path: Path, sibling: str, found: list[str]
) -> None:
    graph = _package(
        tmp_path,
        {
            "__init__.py": "",
            "sub/__init__.py": "from pkg.sub import codec\nfrom pkg.sub.server import Server\n",
            "sub/codec.py": "encode = 1\n",
            "sub/server.py": f"{sibling}\nServer = 1\n",
        },
    )
    assert [describe(c).splitlines()[0] for c in cycles(graph)] == found


def test_a_submodule_that_imports_from_its_own_package_is_on_a_cycle(tmp_path: Path) -> None:
    graph = _package(
        tmp_path,
        {
            "__init__.py": "",
            "sub/__init__.py": "from pkg.sub.a import A\nB = 2\n",
            "sub/a.py": "from pkg.sub import B\nA = 1\n",
            "me.py": "from pkg import me\n",
        },
    )
    assert sorted(describe(c).splitlines()[0] for c in cycles(graph)) == [
        "pkg.me -> pkg.me",
        "pkg.sub -> pkg.sub.a -> pkg.sub",
    ]


def test_importing_a_submodule_from_outside_runs_its_package(tmp_path: Path) -> None:
    """Here `pkg.low` is on a cycle only through `pkg.high/__init__`, which Python runs
    before `pkg.high.leaf` when `pkg.low` imports that."""
    graph = _package(
        tmp_path,
        {
            "__init__.py": "",
            "low.py": "from pkg.high.leaf import x\n",
            "high/__init__.py": "from pkg.high.top import y\n",
            "high/leaf.py": "x = 1\n",
            "high/top.py": "import pkg.low\ny = 2\n",
        },
    )
    assert _targets(graph, "pkg.low") == {"pkg.high", "pkg.high.leaf"}
    assert [describe(c).splitlines()[0] for c in cycles(graph)] == [
        "pkg.high -> pkg.high.top -> pkg.low -> pkg.high"
    ]


def test_the_graph_holds_every_module_of_the_package_and_no_task_data() -> None:
    graph = import_graph()
    expected = {p for p in PACKAGE.rglob("*.py") if not p.is_relative_to(DATA)}
    assert len(graph) == len(expected) > 100
    assert {"codetrial", "codetrial.sandbox.server", "codetrial.cli.run"} <= set(graph)
    assert "codetrial.sweep.spec" in _targets(graph, "codetrial.sweep")


def test_no_module_is_on_an_import_cycle() -> None:
    found = cycles(import_graph())
    assert not found, f"{len(found)} import cycles:\n" + "\n".join(map(describe, found))


def part(module: str) -> str:
    """The top-level module or package `module` is in (`codetrial.report.board`:
    `codetrial.report`); the package's own `__init__` is itself."""
    return ".".join(module.split(".")[:2])


def parts(graph: dict[str, list[Edge]]) -> dict[str, list[Edge]]:
    """The graph of the package's parts: an edge from one part to another for each
    import between their modules, at the line of that import."""
    found: dict[str, list[Edge]] = {part(m): [] for m in graph}
    for module, edges in graph.items():
        found[part(module)] += [
            Edge(part(module), part(e.target), e.line)
            for e in edges
            if part(e.target) != part(module)
        ]
    return found


def test_no_part_of_the_package_is_on_an_import_cycle_with_another() -> None:
    """Two parts that import each other (`report` and `runs`; `environments` and
    `verdict`) are one part in all but name, even when no two modules of theirs form a
    cycle: neither can be read, moved or tested without the other."""
    found = cycles(parts(import_graph()))
    assert not found, f"{len(found)} cycles between parts:\n" + "\n".join(map(describe, found))


def test_every_module_has_a_layer_and_every_name_of_the_table_a_module() -> None:
    graph, placed = import_graph(), layers()
    assert [m for m in graph if layer_of(m, placed) is None] == []
    assert [name for name in placed if name not in graph] == []


def test_a_module_of_a_higher_layer_is_reported(tmp_path: Path) -> None:
    graph = _package(
        tmp_path,
        {
            "__init__.py": "",
            "low.py": "def f():\n    from pkg.high import thing\n",
            "high.py": "from pkg import low\nthing = 1\n",
        },
    )
    placed = {"pkg.low": (0, "bottom"), "pkg.high": (1, "top")}
    assert upward(graph, placed) == [
        "pkg.low (line 2) imports pkg.high: layer bottom imports layer top above it"
    ]


def test_no_module_imports_a_layer_above_its_own() -> None:
    found = upward(import_graph(), layers())
    assert not found, f"{len(found)} imports of a higher layer:\n" + "\n".join(found)
