"""minimalloc as ExecuTorch's memory planner.

ExecuTorch lets a user pass any memory planning algorithm to its
``MemoryPlanningPass``. :func:`memory_planning_pass` returns one that plans
with minimalloc::

    from executorch.exir import to_edge, ExecutorchBackendConfig
    from minimalloc.executorch import memory_planning_pass

    program = to_edge(torch.export.export(model, inputs)).to_executorch(
        ExecutorchBackendConfig(memory_planning_pass=memory_planning_pass(timeout=1.0))
    )

How a graph becomes problems (one per ``mem_id``, each minimised):

- a tensor spec is a buffer alive over its inclusive node range
  ``lifetime``, of ``allocated_memory`` bytes (after ``realign``), at a
  multiple of the pass's alignment;
- a spec inside another's storage (``storage_base``) is not a buffer of
  its own: ExecuTorch has already stretched its base's lifetime over its
  own, and it is placed at its base's offset plus ``storage_base_offset``;
- a control-flow node (cond, while, map, scan) whose submodules were
  planned first reserves ``input_mem_buffer_sizes[mem_id]`` bytes at the
  bottom of the arena *from that node to the last use of its results*
  (a block fixed at offset 0): the submodule's tensors live while it
  runs, and its outputs as long as the graph uses the node's results
  (the runtime passes them on by reference), so the rest of the graph
  may use those bytes before and after;
- zero-size specs take no bytes and sit at offset 0;
- ``extra_padding`` is added to each arena, as ExecuTorch's planners do.

``mem_obj_id`` (which ExecuTorch's verifier requires to agree for any two
specs whose bytes overlap) numbers the runs of overlapping storage.

The algorithm also runs ExecuTorch's own ``greedy`` on the same specs and
keeps whichever plan has the smaller total (ours on a tie): it never
returns a larger arena than the default planner. :attr:`MinimallocAlgorithm.reports`
says, per call, what each gave and which was kept.

torch and executorch are optional dependencies of minimalloc (the
``executorch`` extra); only this module imports them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

try:
    import torch
    # executorch ships no type information.
    from executorch.exir.memory_planning import (  # type: ignore[import-untyped]
        MemoryAlgoResult,
        MemoryPlanningAlgorithmSuite,
        SpecAllocResult,
        greedy,
    )
    from executorch.exir.passes import MemoryPlanningPass  # type: ignore[import-untyped]
except ImportError as error:  # pragma: no cover - depends on the environment
    raise ImportError(
        "minimalloc.executorch needs torch and executorch: "
        "pip install 'minimalloc[executorch]'"
    ) from error

from ._api import MinimallocError, Problem

__all__ = ["ArenaReport", "MinimallocAlgorithm", "PlanReport", "memory_planning_pass"]


@dataclass
class ArenaReport:
    """One arena (``mem_id``) of one planned graph."""

    mem_id: int
    buffers: int
    """Specs planned as buffers (storage-backed and zero-size ones excluded)."""
    reserved: int
    """Bytes reserved for control-flow submodules (0 if none)."""
    ours: int
    """minimalloc's arena, padding included."""
    lower_bound: int
    """Proven: no plan of these buffers is lower (padding included)."""
    optimal: bool


@dataclass
class PlanReport:
    """What one call of the algorithm (one graph or submodule) gave."""

    arenas: List[ArenaReport] = field(default_factory=list)
    ours: List[int] = field(default_factory=list)
    """minimalloc's ``bufsizes`` (index 0 is the constants slot)."""
    greedy: Optional[List[int]] = None
    """ExecuTorch's greedy ``bufsizes``, when it was run and succeeded."""
    kept: str = "minimalloc"
    """"minimalloc" or "greedy": the plan returned."""
    seconds: float = 0.0
    """Time spent in minimalloc (greedy excluded)."""


def _control_flow_targets() -> Tuple[Any, ...]:
    ops = getattr(torch.ops, "higher_order", None)
    names = ("cond", "while_loop", "map_impl", "scan")
    return tuple(getattr(ops, name) for name in names if ops is not None and hasattr(ops, name))


def _control_flow_spans(graph_module: torch.fx.GraphModule) -> List[Tuple[int, int]]:
    """For each control-flow node, the node indices (as ExecuTorch numbers
    lifetimes) over which its submodules' bytes are in use: from the node
    to the last use of its results. ExecuTorch's runtime hands a branch's
    outputs to the graph by reference (a move of the value, not a copy of
    its data), so the results live in the submodule's bytes."""
    targets = _control_flow_targets()
    spans = []
    for index, node in enumerate(graph_module.graph.nodes):
        if node.op != "call_function" or node.target not in targets:
            continue
        end = index
        for holder in [node, *node.users]:
            spec = holder.meta.get("spec")
            for s in spec if isinstance(spec, (list, tuple)) else [spec]:
                lifetime = getattr(s, "lifetime", None)
                if lifetime is not None and lifetime[1] is not None:
                    end = max(end, int(lifetime[1]))
        spans.append((index, end))
    return spans


def _storage_root(spec: Any) -> Tuple[Any, int]:
    """The spec that owns ``spec``'s storage, and ``spec``'s byte offset in it."""
    offset = 0
    seen = set()
    while spec.storage_base is not None:
        if id(spec) in seen:
            raise MinimallocError("circular storage_base chain among tensor specs")
        seen.add(id(spec))
        offset += int(spec.storage_base_offset)
        spec = spec.storage_base
    return spec, offset


def _object_ids(placed: Sequence[Tuple[Any, int, int, int]]) -> Dict[int, int]:
    """``mem_obj_id`` per spec (keyed by ``id(spec)``): specs of one arena
    whose bytes overlap, directly or through others, share one id."""
    ids: Dict[int, int] = {}
    next_id = 0
    by_arena: Dict[int, List[Tuple[int, int, Any]]] = {}
    for spec, mem_id, offset, size in placed:
        if size <= 0:
            ids[id(spec)] = next_id
            next_id += 1
        else:
            by_arena.setdefault(mem_id, []).append((offset, offset + size, spec))
    for runs in by_arena.values():
        runs.sort(key=lambda run: (run[0], run[1]))
        end = None
        for lower, upper, spec in runs:
            if end is None or lower >= end:
                next_id += 1
                end = upper
            else:
                end = max(end, upper)
            ids[id(spec)] = next_id - 1
    return ids


class MinimallocAlgorithm:
    """A memory planning algorithm for ExecuTorch's
    ``MemoryPlanningAlgorithmSuite`` that plans with minimalloc.

    Each arena is minimised within ``timeout`` seconds (it stops earlier
    once the plan meets its lower bound); ``threads`` and ``seed`` are
    minimalloc's. With ``keep_greedy`` (the default) ExecuTorch's greedy
    also runs and the smaller plan is kept.
    """

    __name__ = "minimalloc"

    def __init__(
        self,
        timeout: float = 1.0,
        *,
        threads: Optional[int] = None,
        seed: Optional[int] = 0,
        keep_greedy: bool = True,
    ) -> None:
        self.timeout = timeout
        self.threads = threads
        self.seed = seed
        self.keep_greedy = keep_greedy
        self.reports: List[PlanReport] = []
        """One report per call, in call order (submodules first)."""

    def __call__(
        self,
        alignment: int,
        specs: Any,
        graph_module: torch.fx.GraphModule,
        graph_signature: Any,
        extra_padding: int = 0,
    ) -> MemoryAlgoResult:
        started = time.perf_counter()
        report = PlanReport()
        ours = self._plan(alignment, list(specs), graph_module, extra_padding, report)
        report.ours = list(ours.bufsizes)
        report.seconds = time.perf_counter() - started
        result = ours
        if self.keep_greedy:
            # greedy keeps its decisions in its own result; the specs'
            # offsets are written only by the suite, from the kept one.
            theirs = greedy(alignment, specs, graph_module, graph_signature, extra_padding)
            report.greedy = list(theirs.bufsizes)
            if len(theirs.bufsizes) == len(ours.bufsizes) and sum(theirs.bufsizes) < sum(ours.bufsizes):
                result = theirs
                report.kept = "greedy"
        self.reports.append(report)
        return result

    def _plan(
        self,
        alignment: int,
        specs: List[Any],
        graph_module: torch.fx.GraphModule,
        extra_padding: int,
        report: PlanReport,
    ) -> MemoryAlgoResult:
        result = MemoryAlgoResult({}, [])
        reserved = list(getattr(graph_module, "input_mem_buffer_sizes", None) or [])
        roots: Dict[int, List[Any]] = {}
        backed: List[Any] = []
        for spec in specs:
            spec.realign(alignment)
            mem_id = 1 if spec.mem_id is None else int(spec.mem_id)
            result.spec_dict[spec] = SpecAllocResult(mem_id, 0, 0)
            if spec.storage_base is not None:
                backed.append(spec)
            else:
                roots.setdefault(mem_id, []).append(spec)
        if not specs:
            result.bufsizes = [0, 0]
            return result

        arenas = set(roots) | {m for m, r in enumerate(reserved) if r > 0 and m > 0}
        bufsizes = [0] * max(2, max(arenas, default=1) + 1, len(reserved))
        flow = _control_flow_spans(graph_module)
        offsets: Dict[int, int] = {}
        for mem_id in sorted(arenas):
            members = roots.get(mem_id, [])
            reserve = reserved[mem_id] if mem_id < len(reserved) else 0
            height, bound, optimal, planned = self._plan_arena(members, alignment, reserve, flow, offsets)
            bufsizes[mem_id] = height + extra_padding
            report.arenas.append(
                ArenaReport(mem_id, planned, reserve, height + extra_padding, bound + extra_padding, optimal)
            )

        placed = []
        for spec in specs:
            alloc = result.spec_dict[spec]
            if spec.storage_base is not None:
                root, inside = _storage_root(spec)
                if root not in result.spec_dict:
                    raise MinimallocError(
                        "a tensor spec lives in the storage of one that is not planned with it"
                    )
                alloc.mem_id = result.spec_dict[root].mem_id
                alloc.mem_offset = offsets[id(root)] + inside
            else:
                alloc.mem_offset = offsets[id(spec)]
            placed.append((spec, alloc.mem_id, alloc.mem_offset, int(spec.allocated_memory)))
        ids = _object_ids(placed)
        for spec, _, _, _ in placed:
            result.spec_dict[spec].mem_obj_id = ids[id(spec)]
        result.bufsizes = bufsizes
        return result

    def _plan_arena(
        self,
        members: List[Any],
        alignment: int,
        reserve: int,
        flow: List[Tuple[int, int]],
        offsets: Dict[int, int],
    ) -> Tuple[int, int, bool, int]:
        """Places ``members`` (specs of one arena) and the reservation;
        writes offsets by ``id(spec)``; returns the height, a lower bound,
        whether the height is proven optimal, and how many were planned."""
        buffers = [s for s in members if int(s.allocated_memory) > 0]
        for spec in members:
            offsets[id(spec)] = 0
        lifetimes = [(int(s.lifetime[0]), int(s.lifetime[1])) for s in buffers]
        blocks: List[Tuple[int, int]] = []
        if reserve > 0:
            if flow:
                blocks = list(flow)
            else:
                # No control-flow node to scope it to: reserve throughout.
                first = min((lo for lo, _ in lifetimes), default=0)
                last = max((hi for _, hi in lifetimes), default=0)
                blocks = [(first, last)]
        if not buffers and not blocks:
            return 0, 0, True, 0
        problem = Problem(None, lifetime="inclusive")
        if buffers:
            problem.add_many(
                [lo for lo, _ in lifetimes],
                [hi for _, hi in lifetimes],
                [int(s.allocated_memory) for s in buffers],
                [alignment] * len(buffers),
            )
        for lower, upper in blocks:
            problem.fix(problem.add(lower, upper, reserve), 0)
        solved = problem.solve(
            minimize=True, timeout=self.timeout, threads=self.threads, seed=self.seed, check=True
        )
        assert solved.offsets is not None and solved.height is not None
        for spec, offset in zip(buffers, solved.offsets):
            offsets[id(spec)] = int(offset)
        return int(solved.height), int(solved.lower_bound), bool(solved.optimal), len(buffers)


def memory_planning_pass(
    timeout: float = 1.0,
    *,
    threads: Optional[int] = None,
    seed: Optional[int] = 0,
    keep_greedy: bool = True,
    **pass_options: Any,
) -> MemoryPlanningPass:
    """A ready ``MemoryPlanningPass`` that plans with minimalloc.

    ``timeout``, ``threads``, ``seed`` and ``keep_greedy`` go to
    :class:`MinimallocAlgorithm` (reachable afterwards as the pass's
    ``minimalloc`` attribute, with its reports); every other keyword
    (``alignment``, ``alloc_graph_input``, ...) to ``MemoryPlanningPass``.
    """
    algorithm = MinimallocAlgorithm(timeout, threads=threads, seed=seed, keep_greedy=keep_greedy)
    planning_pass = MemoryPlanningPass(
        memory_planning_algo=MemoryPlanningAlgorithmSuite(algo_list=[algorithm]), **pass_options
    )
    planning_pass.minimalloc = algorithm
    return planning_pass
