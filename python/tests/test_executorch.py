"""minimalloc as ExecuTorch's memory planner, on real PyTorch models:
each is exported with our planning pass, checked by ExecuTorch's verifier
(and for control flow, by a check of the submodules' reserved bytes),
run by the ExecuTorch runtime against eager PyTorch, and compared with
the default planner's arena.

torch and executorch are the package's optional extra. These tests are
skipped, loudly, only when MINIMALLOC_SKIP_EXECUTORCH=1; otherwise a
missing extra is an error."""

from __future__ import annotations

import copy
import os
import pathlib
import random
import re

import pytest

if os.environ.get("MINIMALLOC_SKIP_EXECUTORCH") == "1":
    pytest.skip("MINIMALLOC_SKIP_EXECUTORCH=1: ExecuTorch tests not run", allow_module_level=True)

import torch  # noqa: E402
from executorch.exir.memory_planning import greedy  # noqa: E402
from executorch.exir.tensor import TensorSpec  # noqa: E402

import et_models  # noqa: E402
from executorch.exir import ExecutorchBackendConfig, to_edge  # noqa: E402
from executorch.exir.pass_base import PassBase, PassResult  # noqa: E402
from et_harness import compare, run_and_compare, verify  # noqa: E402
from minimalloc.executorch import MinimallocAlgorithm, memory_planning_pass  # noqa: E402

MODELS = et_models.TESTED


@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_runs_as_eager_and_fits_in_no_more_than_the_default(name: str) -> None:
    torch.manual_seed(0)
    model = MODELS[name]()
    planning_pass = memory_planning_pass(timeout=1.0)
    got = compare(model, planning_pass, runs=getattr(model, "others", lambda: [])())
    assert got["ours"] <= got["default"], got
    reports = planning_pass.minimalloc.reports
    assert reports, "the algorithm was not called"
    for report in reports:
        assert report.greedy is not None
        kept = report.ours if report.kept == "minimalloc" else report.greedy
        assert sum(kept) == min(sum(report.ours), sum(report.greedy))
        for arena in report.arenas:
            assert arena.lower_bound <= arena.ours


def _spec(size: int, lower: int, upper: int, mem_id=None) -> TensorSpec:
    spec = TensorSpec.from_tensor(torch.empty(size, dtype=torch.uint8))
    spec.lifetime = [lower, upper]
    spec.mem_id = mem_id
    return spec


def test_arenas_storage_and_zero_size_specs_on_random_graphs() -> None:
    # Hand-made specs: two arenas, specs inside others' storage at an
    # offset, zero-size ones, a reservation. Every pair alive together
    # must be apart in bytes unless one lives in the other's storage.
    graph_module = torch.fx.symbolic_trace(torch.nn.Identity())
    rng = random.Random(7)
    for trial in range(40):
        specs = []
        for _ in range(rng.randint(1, 30)):
            lower = rng.randint(0, 20)
            spec = _spec(rng.choice([0, 1, 7, 16, 100, 256]), lower, lower + rng.randint(0, 6), rng.choice([None, 2]))
            specs.append(spec)
        for _ in range(rng.randint(0, 4)):
            base = rng.choice(specs)
            if base.allocated_memory < 32 or base.storage_base is not None:
                continue
            inner = _spec(16, base.lifetime[0], base.lifetime[1])
            inner.storage_base = base
            inner.storage_base_offset = 16 * rng.randint(0, base.allocated_memory // 16 - 1)
            specs.append(inner)
        reserve = rng.choice([0, 0, 64])
        graph_module.input_mem_buffer_sizes = [0, reserve]
        algorithm = MinimallocAlgorithm(timeout=0.2, keep_greedy=False)
        result = algorithm(16, set(specs), graph_module, None, 8)
        placed = {s: result.spec_dict[s] for s in specs}
        for a in specs:
            alloc = placed[a]
            assert alloc.mem_offset % 16 == 0
            assert alloc.mem_offset + a.allocated_memory + 8 <= result.bufsizes[alloc.mem_id]
            if a.storage_base is not None:
                assert alloc.mem_offset == placed[a.storage_base].mem_offset + a.storage_base_offset
                assert alloc.mem_id == placed[a.storage_base].mem_id
            elif reserve and alloc.mem_id == 1 and a.allocated_memory:
                # No control-flow node: the reservation holds throughout.
                assert alloc.mem_offset >= reserve
        for i, a in enumerate(specs):
            for b in specs[i + 1 :]:
                pa, pb = placed[a], placed[b]
                if pa.mem_id != pb.mem_id or not a.allocated_memory or not b.allocated_memory:
                    continue
                overlap_bytes = pa.mem_offset < pb.mem_offset + b.allocated_memory and pb.mem_offset < pa.mem_offset + a.allocated_memory
                overlap_time = a.lifetime[0] <= b.lifetime[1] and b.lifetime[0] <= a.lifetime[1]
                related = a.storage_base is b or b.storage_base is a or (a.storage_base is not None and a.storage_base is b.storage_base)
                if overlap_bytes:
                    assert pa.mem_obj_id == pb.mem_obj_id, trial
                if overlap_bytes and overlap_time and not related:
                    raise AssertionError(f"trial {trial}: specs alive together share bytes")
        # Never more than ExecuTorch's greedy on the same specs.
        theirs = greedy(16, set(specs), graph_module, None, 8)
        if len(theirs.bufsizes) == len(result.bufsizes):
            kept = MinimallocAlgorithm(timeout=0.2)(16, set(specs), graph_module, None, 8)
            assert sum(kept.bufsizes) <= sum(theirs.bufsizes)


def test_the_readme_example_exports_plans_and_runs() -> None:
    root = pathlib.Path(__file__).resolve().parents[2]
    readme = (root / "README.md").read_text()
    section = readme[readme.index("### ExecuTorch") :]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    exec(compile(code, "README.md", "exec"), {})


class _ShareReluStorage(PassBase):  # type: ignore[misc]
    """Makes every ReLU write into its argument's storage, as a backend's
    pass may (ExecuTorch then gives its output a ``storage_base``)."""

    def call(self, graph_module: torch.fx.GraphModule) -> PassResult:
        changed = False
        for node in graph_module.graph.nodes:
            if node.op == "call_function" and "relu" in str(node.target):
                node.meta["_share_alloc_with_arg_idx"] = 0
                changed = True
        return PassResult(graph_module, changed)


def test_tensors_in_their_arguments_storage_run_as_eager() -> None:
    torch.manual_seed(0)
    model = et_models.Shared().eval()
    inputs = model.example()
    with torch.no_grad():
        exported = torch.export.export(model, inputs)
    planning_pass = memory_planning_pass(timeout=1.0, keep_greedy=False)
    config = ExecutorchBackendConfig(passes=[_ShareReluStorage()], memory_planning_pass=planning_pass)
    program = to_edge(exported).to_executorch(config)
    backed = [
        node.meta["spec"]
        for node in program.exported_program().graph_module.graph.nodes
        if getattr(node.meta.get("spec"), "storage_base", None) is not None
    ]
    assert backed, "no tensor was given its argument's storage"
    for spec in backed:
        assert spec.mem_offset == spec.storage_base.mem_offset + spec.storage_base_offset
    verify(program)
    run_and_compare(program, model, [inputs, (torch.randn(3, 16),)])


@pytest.mark.parametrize("name", ["resnet", "decoder"])
def test_models_delegated_to_xnnpack_run_as_eager(name: str) -> None:
    # Delegated graphs: the delegate's inputs and outputs are planned
    # tensors, and ExecuTorch pads each arena for XNNPACK.
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower

    from et_harness import arena_bytes

    torch.manual_seed(0)
    model = MODELS[name]().eval()
    inputs = model.example()
    with torch.no_grad():
        exported = torch.export.export(model, inputs)
    sizes = []
    for planning_pass in [memory_planning_pass(timeout=1.0), None]:
        config = ExecutorchBackendConfig()
        if planning_pass is not None:
            config.memory_planning_pass = planning_pass
        lowered = to_edge_transform_and_lower(copy.deepcopy(exported), partitioner=[XnnpackPartitioner()])
        program = lowered.to_executorch(config)
        if planning_pass is not None:
            verify(program)
            run_and_compare(program, model, [inputs])
        sizes.append(arena_bytes(program))
    assert sizes[0] <= sizes[1], sizes


def test_dynamic_shapes_and_several_methods_run_as_eager() -> None:
    from executorch.runtime import Runtime
    from torch.export import Dim

    torch.manual_seed(0)
    model = et_models.MLP().eval()
    batch = Dim("batch", min=1, max=32)
    with torch.no_grad():
        exported = torch.export.export(model, model.example(), dynamic_shapes=({0: batch},))
    program = to_edge(exported).to_executorch(ExecutorchBackendConfig(memory_planning_pass=memory_planning_pass()))
    verify(program)
    method = Runtime.get().load_program(program.buffer).load_method("forward")
    for n in [1, 8, 32]:
        x = torch.randn(n, 64)
        with torch.no_grad():
            torch.testing.assert_close(method.execute([x])[0], model(x), rtol=1e-4, atol=1e-4)

    # Two methods of one program: each planned on its own.
    with torch.no_grad():
        methods = {
            "forward": torch.export.export(model, (torch.randn(2, 64),)),
            "wide": torch.export.export(model, (torch.randn(16, 64),)),
        }
    planning_pass = memory_planning_pass()
    program = to_edge(methods).to_executorch(ExecutorchBackendConfig(memory_planning_pass=planning_pass))
    loaded = Runtime.get().load_program(program.buffer)
    for name, n in [("forward", 2), ("wide", 16)]:
        x = torch.randn(n, 64)
        with torch.no_grad():
            torch.testing.assert_close(loaded.load_method(name).execute([x])[0], model(x), rtol=1e-4, atol=1e-4)
    assert len(planning_pass.minimalloc.reports) == 2
