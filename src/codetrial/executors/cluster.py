"""The Ray executor: a sweep's cells, or a samples file's shards, as work on a Ray
cluster that is already running (`ray start --head`, then `ray start --address` on
each other machine, codetrial installed on each).

Sweeps. Each node gets one actor per model, so a model loads once per node, and each
actor runs one cell at a time into a scratch folder of its node. The actor asks for
the CPUs the cells judge with (their `workers`) and the memory the sweep file's
`[ray]` table declares, so Ray places actors only where those fit. A cell's run
directory comes back to the driver, into the sweep's folder, when the cell ends; a
cell stopped half-way goes out with its stored attempts and is resumed there. Every
attempt's progress reaches the driver's terminal as it is stored. A node that dies
takes only its cells in flight with it: they go back in the queue and run again,
from the driver's copy, on the nodes left. Ctrl-C stops the actors, keeping every
cell that came back.

Samples. Each node gets one actor with a warm sandbox pool, shards of the samples
go to whichever is free, and the verdicts come back in the samples' order, as
`codetrial.samples.judge_all` stores them: the same verdicts the local executor gives.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import shutil
import socket
import tarfile
import tempfile
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from rich.console import Console

from codetrial.config import RunConfig
from codetrial.errors import (
    BackendUnavailable,
    CodetrialError,
    ConfigError,
    Interrupted,
    StoreError,
)
from codetrial.executors.base import EXECUTORS, Cell, Cells, Runner, Sample
from codetrial.executors.local import local_verdicts
from codetrial.extras import require
from codetrial.gate import Profile, get_profile
from codetrial.progress import Bar, Progress, Silent
from codetrial.records import AttemptRecord, Verdict
from codetrial.sandbox import SandboxPolicy
from codetrial.verdict.pool import JudgePool

NODE_LOSSES = 3  # a cell whose node died this many times is recorded as failed
_POLL_S = 0.2
_LOOPBACK = ("127.0.0.1", "localhost", "::1")


def connect(address: str) -> ModuleType:
    """Ray, connected to the cluster at `address` ("auto": the one `ray start` started
    here, or $RAY_ADDRESS); a BackendUnavailable says how to start one."""
    host, _, port = address.rpartition(":")
    if host.strip("[]") in _LOOPBACK:
        # Ray rewrites a loopback address to the machine's own; a cluster started on
        # loopback (one machine) is reachable only there.
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    ray = require("ray", "ray", "ray", "--ray")
    if ray.is_initialized():
        return ray
    try:
        if address != "auto":  # Ray itself would retry an address nobody answers for minutes
            socket.create_connection((host.strip("[]"), int(port)), timeout=10).close()
        ray.init(address=address, logging_level=logging.ERROR, log_to_driver=False)
    except (OSError, RuntimeError, ValueError) as exc:
        raise BackendUnavailable(
            f"no Ray cluster at {address!r} ({str(exc).strip().splitlines()[0]}): start one "
            "with `ray start --head` (and `ray start --address HEAD:PORT` on other machines), "
            "then pass --ray auto or --ray HEAD:PORT"
        ) from exc
    return ray


def _alive(ray: ModuleType) -> list[dict[str, Any]]:
    return [node for node in ray.nodes() if node["Alive"]]


def _pinned(ray: ModuleType, node_id: str) -> Any:
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    return NodeAffinitySchedulingStrategy(node_id, soft=False)


def pack(run_dir: Path) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        tar.add(run_dir, arcname=run_dir.name)
    return buffer.getvalue()


def unpack(data: bytes, into: Path) -> Path:
    """The run directory in `data`, written under `into` in place of any older copy
    (which stays whole until the new one is complete)."""
    into.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(dir=into, prefix=".incoming-"))
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            tar.extractall(scratch, filter="data")
        (unpacked,) = scratch.iterdir()
        target = into / unpacked.name
        old = scratch / ".old"
        if target.exists():
            target.rename(old)
        try:
            unpacked.rename(target)
        except BaseException:
            if old.exists():
                old.rename(target)
            raise
        return target
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


_SCRATCH = "codetrial-cell-"


def _alive_pid(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


class _Relay:
    """A cell's progress, sent to the driver over a Ray queue."""

    def __init__(self, queue: Any, cell_id: str) -> None:
        self._queue, self._cell = queue, cell_id

    def start(self, run_dir: Path, total: int) -> None:
        self._queue.put(("start", self._cell))

    def advance(self, record: AttemptRecord) -> None:
        slim = record.model_copy(
            update={
                "messages": [],
                "raw_response": "",
                "code": None,
                "files": None,
                "tests": [],
                "visible_output": "",
                "hidden_output": "",
                "feedback": None,
            }
        )
        self._queue.put(("advance", self._cell, slim))


class CellActor:
    """Runs cells of one model on one node, the model loaded once, each in a scratch
    folder of the node that is gone once the cell's run directory has left."""

    def __init__(self, queue: Any, runner: Callable[[], Runner]) -> None:
        self._queue = queue
        self._runner = runner()
        for left in Path(tempfile.gettempdir()).glob(f"{_SCRATCH}*"):
            owner = left.name.removeprefix(_SCRATCH).partition("-")[0]
            if owner.isdigit() and not _alive_pid(int(owner)):
                shutil.rmtree(left, ignore_errors=True)  # an actor stopped mid-cell left it

    def node(self) -> str:
        import ray

        return str(ray.get_runtime_context().get_node_id())

    def run(self, cell: Cell, started: bytes | None) -> tuple[str, str, bytes, float]:
        """("finished" or "failed", the error, the run directory packed, wall seconds)."""
        with tempfile.TemporaryDirectory(prefix=f"{_SCRATCH}{os.getpid()}-") as scratch:
            runs = Path(scratch)
            if started is not None:
                unpack(started, runs)
            try:
                wall_s = self._runner.run(
                    cell, runs, started is not None, _Relay(self._queue, cell.id)
                )
                status, error = "finished", ""
            except CodetrialError as exc:
                status, error, wall_s = "failed", str(exc), 0.0
            run_dir = runs / cell.id
            return status, error, pack(run_dir) if run_dir.exists() else b"", wall_s


def run_cluster(work: Cells, console: Console | None, address: str) -> None:
    """Every cell as Ray work (see the module's docstring), under one progress bar."""
    ray = connect(address)
    from ray.util.queue import Queue

    here = ray.get_runtime_context().get_node_id()  # the driver's node: it outlives the others
    queue = Queue(actor_options={"num_cpus": 0, "scheduling_strategy": _pinned(ray, here)})
    say = console.print if console else lambda text: None
    bar = Bar(console, heading="sweep folder") if console else None
    scheduler = None
    try:
        scheduler = _Scheduler(ray, work, queue, say)
        with bar or contextlib.nullcontext():
            watch: Progress = bar or Silent()
            watch.start(work.folder.path, work.remaining)
            while scheduler.busy():
                scheduler.step()
                for event in queue.get_nowait_batch(queue.qsize()):
                    _show(event, watch, console, scheduler)
            for event in queue.get_nowait_batch(queue.qsize()):
                _show(event, watch, console, scheduler)
    except KeyboardInterrupt as exc:
        raise Interrupted("interrupted; the cells in flight will run again") from exc
    finally:
        if scheduler is not None:
            scheduler.stop()
        queue.shutdown()


def _show(
    event: tuple[Any, ...], watch: Progress, console: Console | None, scheduler: _Scheduler
) -> None:
    kind, cell_id = event[0], event[1]
    if kind == "advance":
        watch.advance(event[2])
    elif console is not None:
        cell, node = scheduler.placed(cell_id)
        console.print(
            f"cell {cell.label} started on node {node[:12]}", highlight=False, soft_wrap=True
        )


class _Scheduler:
    """Actors per (model, node), a queue of cells per model, and the cells in flight."""

    def __init__(
        self, ray: ModuleType, work: Cells, queue: Any, say: Callable[[str], object]
    ) -> None:
        self._ray, self._folder, self._queue, self._say = ray, work.folder, queue, say
        self._runner = work.runner
        self._todo: dict[str, deque[Cell]] = {}
        for cell in work.cells:
            self._todo.setdefault(cell.model, deque()).append(cell)
        self._needs = {model: self._asks(work.resources, t) for model, t in self._todo.items()}
        self._actors: dict[tuple[str, str], Any] = {}
        self._starting: dict[Any, tuple[str, str]] = {}
        self._idle: set[tuple[str, str]] = set()
        self._running: dict[Any, tuple[Cell, tuple[str, str]]] = {}
        self._placed: dict[str, tuple[Cell, str]] = {}
        self._lost: dict[str, int] = {}
        self._actor = ray.remote(CellActor)
        for model in self._todo:
            if not self._spawn(model):
                raise ConfigError(self._no_room(model))

    @staticmethod
    def _asks(resources: Mapping[str, float], todo: Sequence[Cell]) -> dict[str, float]:
        cpus = resources.get("cpus") or max(int(c.options.get("workers", 1)) for c in todo)
        asks = {"num_cpus": float(cpus)}
        if resources.get("memory_mb"):
            asks["memory"] = resources["memory_mb"] * 2**20
        return asks

    def _no_room(self, model: str) -> str:
        needs = self._needs[model]
        return (
            f"no live Ray node has {needs['num_cpus']:g} CPUs"
            + (f" and {needs['memory'] / 2**20:.0f} MB" if "memory" in needs else "")
            + f" for an actor of {model}: lower `workers` or the [ray] table's needs"
        )

    def _spawn(self, model: str) -> bool:
        """An actor for `model` on every live node that has room for one at all;
        whether there is any such node."""
        needs = self._needs[model]
        nodes = [
            n
            for n in _alive(self._ray)
            if n["Resources"].get("CPU", 0) >= needs["num_cpus"]
            and n["Resources"].get("memory", 0) >= needs.get("memory", 0)
        ]
        for node in nodes:
            key = (model, node["NodeID"])
            if key in self._actors:
                continue
            actor = self._actor.options(
                scheduling_strategy=_pinned(self._ray, node["NodeID"]), max_restarts=0, **needs
            ).remote(self._queue, self._runner)
            self._actors[key] = actor
            self._starting[actor.node.remote()] = key
        return bool(nodes)

    def placed(self, cell_id: str) -> tuple[Cell, str]:
        return self._placed[cell_id]

    def busy(self) -> bool:
        return bool(self._running) or any(self._todo.values())

    def step(self) -> None:
        """Wait a moment for an actor to start or a cell to end, then hand out cells."""
        refs = [*self._starting, *self._running]
        done, _ = self._ray.wait(refs, num_returns=1, timeout=_POLL_S) if refs else ([], [])
        for ref in done:
            if ref in self._starting:
                key = self._starting.pop(ref)
                if self._fetch(ref, key) is not None:
                    self._idle.add(key)
            else:
                cell, key = self._running.pop(ref)
                self._ended(cell, key, self._fetch(ref, key))
        for model, todo in self._todo.items():
            # Its actors died with their nodes: new ones on the nodes left, if any fit.
            if todo and not any(key[0] == model for key in self._actors) and not self._spawn(model):
                while todo:
                    self._folder.record_failed(todo.popleft(), self._no_room(model))
        self._hand_out()

    def _fetch(self, ref: Any, key: tuple[str, str]) -> Any:
        """The result behind `ref`: None, and the actor forgotten, when the actor died
        (with its node); a failed cell's result when codetrial itself broke there."""
        try:
            return self._ray.get(ref)
        except self._ray.exceptions.RayTaskError as exc:
            return "failed", f"codetrial failed on its node: {exc.cause!r}", b"", 0.0
        except self._ray.exceptions.RayError:
            self._actors.pop(key, None)
            self._idle.discard(key)
            return None

    def _ended(self, cell: Cell, key: tuple[str, str], result: Any) -> None:
        if result is None:
            self._lost[cell.id] = lost = self._lost.get(cell.id, 0) + 1
            if lost >= NODE_LOSSES:
                self._folder.record_failed(cell, f"its node died {lost} times while running it")
                self._say(f"cell {cell.label} was lost with its node {lost} times: failed")
            else:
                self._todo[cell.model].appendleft(cell)
                self._say(f"cell {cell.label} was lost with node {key[1][:12]}: it runs again")
            return
        status, error, packed, wall_s = result
        if packed:
            unpack(packed, self._folder.cells)
        if status == "finished":
            self._folder.record_finished(cell, wall_s)
        else:
            self._folder.record_failed(cell, error)
        self._idle.add(key)

    def _hand_out(self) -> None:
        for key in sorted(self._idle):
            model = key[0]
            if self._todo[model]:
                cell = self._todo[model].popleft()
                try:
                    started = self._folder.resumable(cell)
                except StoreError as exc:
                    self._folder.record_failed(cell, str(exc))
                    continue
                packed = pack(self._folder.run_dir(cell)) if started else None
                self._running[self._actors[key].run.remote(cell, packed)] = (cell, key)
                self._placed[cell.id] = (cell, key[1])
                self._idle.discard(key)
            elif key in self._actors:  # its model is done: the room goes to other models
                self._ray.kill(self._actors.pop(key))
                self._idle.discard(key)

    def stop(self) -> None:
        for actor in self._actors.values():
            self._ray.kill(actor)
        self._actors.clear()


class ShardActor:
    """A node's warm sandbox pool, judging shards of samples."""

    def __init__(self, policy: SandboxPolicy, workers: int) -> None:
        self._pool = JudgePool(workers, policy)

    def judge(self, shard: list[Sample], profile: Profile) -> list[Verdict]:
        return list(local_verdicts(shard, self._pool, profile))


SHARD = 64  # samples per shard: small enough to balance nodes, large enough to keep pools busy


def cluster_verdicts(items: Sequence[Sample], config: RunConfig, address: str) -> Iterator[Verdict]:
    """Each sample's verdict, in order, judged on every node of the cluster under the
    gate profile of `config`, each node with a pool of `config.workers` sandboxes."""
    profile, policy = get_profile(config.gate_profile), SandboxPolicy.of(config)
    ray = connect(address)
    actor = ray.remote(ShardActor)
    nodes = [n for n in _alive(ray) if n["Resources"].get("CPU", 0) >= 1]
    if not nodes:
        raise ConfigError("no live Ray node has a CPU to judge on")
    actors = {
        n["NodeID"]: actor.options(
            scheduling_strategy=_pinned(ray, n["NodeID"]), num_cpus=1, max_restarts=0
        ).remote(policy, config.workers)
        for n in nodes
    }
    shards = [list(items[i : i + SHARD]) for i in range(0, len(items), SHARD)]
    todo, results = deque(range(len(shards))), {}
    running: dict[Any, tuple[int, str]] = {}
    free = [node for node in actors for _ in range(2)]  # two shards in flight per node
    next_out = 0
    try:
        while next_out < len(shards):
            while free and todo:
                node, index = free.pop(), todo.popleft()
                shard = actors[node].judge.remote(shards[index], profile)
                running[shard] = (index, node)
            done, _ = ray.wait(list(running), num_returns=1, timeout=_POLL_S)
            for ref in done:
                index, node = running.pop(ref)
                try:
                    results[index] = ray.get(ref)
                    free.append(node)
                except ray.exceptions.RayTaskError as exc:
                    raise CodetrialError(f"judging failed on a Ray node: {exc.cause!r}") from exc
                except ray.exceptions.RayError:
                    todo.appendleft(index)
                    actors.pop(node, None)
                    free = [n for n in free if n != node]
                    if not actors:
                        raise BackendUnavailable(
                            "every Ray node judging the samples died; start the cluster again "
                            "and judge them again"
                        ) from None
            while next_out in results:
                yield from results.pop(next_out)
                next_out += 1
    finally:
        for handle in actors.values():
            ray.kill(handle)


class Ray:
    """The Ray executor, on the cluster at `address` (None or "auto": the one started
    here)."""

    def __init__(self, address: str | None) -> None:
        self.address = "auto" if address is None else address

    def run_cells(self, work: Cells, console: Console | None) -> None:
        run_cluster(work, console, self.address)

    def verdicts(
        self, samples: Sequence[Sample], config: RunConfig, pool: JudgePool
    ) -> Iterator[Verdict]:
        """Judged on the cluster's nodes, each in a pool of its own: `pool` is not used."""
        return cluster_verdicts(samples, config, self.address)


EXECUTORS.register("ray", Ray)
