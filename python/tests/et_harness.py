"""Export, plan, verify and run a model with ExecuTorch: shared by the
ExecuTorch tests and the bench (python/benchmarks/executorch_models.py)."""

from __future__ import annotations

import copy
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import torch
from executorch.exir import ExecutorchBackendConfig, to_edge
from executorch.exir.memory_planning import Verifier
from executorch.exir.passes.init_mutable_pass import InitializedMutableBufferPass
from executorch.runtime import Runtime


def export(model: torch.nn.Module, inputs: Tuple[Any, ...], planning_pass: Optional[Any] = None) -> Any:
    """The ExecuTorch program of ``model`` (the default planner unless
    ``planning_pass`` is given)."""
    # Inference programs: without grad, in-place updates of mutable
    # buffers (a KV cache) are legal to run through the edge passes.
    with torch.no_grad():
        exported = torch.export.export(model, inputs)
    # Mutable buffers named in `initialized` keep their initial values.
    passes = [InitializedMutableBufferPass(model.initialized)] if hasattr(model, "initialized") else []
    config = ExecutorchBackendConfig(passes=passes)
    if planning_pass is not None:
        config.memory_planning_pass = planning_pass
    return to_edge(exported).to_executorch(config)


def arena_bytes(program: Any) -> int:
    """Planned bytes of every method's arenas."""
    return sum(sum(plan.non_const_buffer_sizes) for plan in program.executorch_program.execution_plan)


def _submodules(graph_module: torch.fx.GraphModule) -> Iterator[Tuple[int, int, torch.fx.GraphModule]]:
    """(first, last, submodule) for each control-flow submodule called:
    its bytes are in use from the node's index to the last use of the
    node's results (the runtime passes a branch's outputs on by
    reference)."""
    for index, node in enumerate(graph_module.graph.nodes):
        if node.op != "call_function":
            continue
        last = index
        for holder in [node, *node.users]:
            spec = holder.meta.get("spec")
            for s in spec if isinstance(spec, (list, tuple)) else [spec]:
                if getattr(s, "lifetime", None) is not None and s.lifetime[1] is not None:
                    last = max(last, s.lifetime[1])
        for arg in node.args:
            if isinstance(arg, torch.fx.Node) and arg.op == "get_attr":
                sub = getattr(graph_module, str(arg.target), None)
                if isinstance(sub, torch.fx.GraphModule):
                    yield index, last, sub


def _placed(graph_module: torch.fx.GraphModule) -> List[Any]:
    specs = []
    seen = set()
    for node in graph_module.graph.nodes:
        spec = node.meta.get("spec")
        for s in spec if isinstance(spec, (list, tuple)) else [spec]:
            if getattr(s, "mem_offset", None) is not None and s.mem_id is not None and id(s) not in seen:
                seen.add(id(s))
                specs.append(s)
    return specs


def verify(program: Any) -> int:
    """Runs ExecuTorch's verifier on every graph and submodule, and checks
    that a control-flow submodule's bytes are free of every tensor of the
    graph alive from its node to the last use of its results. Returns how
    many pairs reuse storage."""
    exported = program.exported_program()
    pairs = Verifier(exported.graph_module, True, True, True, exported.graph_signature).verify_storage_reuse()

    def walk(graph_module: torch.fx.GraphModule) -> int:
        found = 0
        outer = _placed(graph_module)
        for first, last, sub in _submodules(graph_module):
            found += Verifier(sub, False, True, True).verify_storage_reuse()
            found += walk(sub)
            inner = _placed(sub)
            for s in outer:
                lo, hi = s.lifetime
                if hi < first or last < lo or s.allocated_memory == 0:
                    continue
                for t in inner:
                    if t.mem_id == s.mem_id and t.allocated_memory > 0:
                        assert (
                            t.mem_offset + t.allocated_memory <= s.mem_offset
                            or s.mem_offset + s.allocated_memory <= t.mem_offset
                        ), f"a submodule's tensor overlaps one alive at nodes {first}-{last}"
        return found

    return pairs + walk(exported.graph_module)


def run_and_compare(program: Any, model: torch.nn.Module, runs: Sequence[Tuple[Any, ...]]) -> None:
    """Runs ``program`` on each input in turn (one loaded method, so that
    mutable state carries over) and compares with a fresh copy of
    ``model`` run eagerly in the same order."""
    method = Runtime.get().load_program(program.buffer).load_method("forward")
    eager = copy.deepcopy(model)
    for inputs in runs:
        got = method.execute(list(inputs))
        with torch.no_grad():
            want = eager(*inputs)
        want = want if isinstance(want, (list, tuple)) else [want]
        assert len(got) == len(want)
        for g, w in zip(got, want):
            torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-4)


def compare(model: torch.nn.Module, planning_pass: Any, *, runs: Optional[Sequence[Tuple[Any, ...]]] = None) -> Dict[str, Any]:
    """Exports ``model`` with ``planning_pass`` and with the default
    planner; verifies ours, runs it against eager, and returns the arena
    bytes of both."""
    model = model.eval()
    inputs = model.example()  # type: ignore[operator]
    ours = export(copy.deepcopy(model), inputs, planning_pass)
    default = export(copy.deepcopy(model), inputs)
    pairs = verify(ours)
    run_and_compare(ours, model, [inputs, *(runs or [])])
    return {"ours": arena_bytes(ours), "default": arena_bytes(default), "reuse_pairs": pairs}
