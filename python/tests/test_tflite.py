"""minimalloc.tflite against TFLite Micro's own runtime: every committed
model planned, then run planned and unplanned in TFLM's C++ interpreter
(tflite-micro from PyPI, the package's `tflite` extra, which the test
command installs: these tests do not skip)."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import numpy as np
import pytest

from conftest import check_placement

from minimalloc import tflite
from tflite_micro.python.tflite_micro import runtime

MODELS = sorted((pathlib.Path(__file__).parent / "tflite_models").glob("*.tflite"))


def offline_plan(data: bytes) -> list:
    """The OfflineMemoryAllocation entries of `data` (each a list of ints)."""
    m = tflite._model(data)
    plans = []
    for entry in m.metadata or []:
        name = entry.name.decode() if isinstance(entry.name, bytes) else entry.name
        if name == tflite.OFFLINE_PLAN:
            words = np.frombuffer(bytes(m.buffers[entry.buffer].data), dtype="<i4")
            plans.append([int(w) for w in words])
    return plans


def run(data: bytes, arena: int, inputs: list) -> list:
    it = runtime.Interpreter.from_bytes(data, arena_size=arena)
    outs = []
    for x in inputs:
        it.set_input(x, 0)
        it.invoke()
        outs.append(it.get_output(0).copy())
        it.reset()
    return outs


def random_inputs(data: bytes, count: int, seed: int) -> list:
    it = runtime.Interpreter.from_bytes(data, arena_size=1 << 22)
    d = it.get_input_details(0)
    rng = np.random.default_rng(seed)
    dtype = np.dtype(d["dtype"])
    xs = []
    for _ in range(count):
        if dtype.kind == "f":
            xs.append(rng.normal(size=d["shape"]).astype(dtype))
        else:
            info = np.iinfo(dtype)
            xs.append(rng.integers(info.min, info.max, size=d["shape"], endpoint=True).astype(dtype))
    return xs


def test_the_models_are_there():
    assert len(MODELS) >= 5, MODELS


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.stem)
def test_a_planned_model_runs_in_tflm_with_identical_outputs_and_no_larger_arena(path):
    data = path.read_bytes()
    planned, report = tflite.plan_model_with_report(data, timeout=1.0, seed=1)
    # The plan is there, once, one offset per tensor of every subgraph.
    plans = offline_plan(planned)
    assert len(plans) == 1
    words = plans[0]
    assert words[2] == report.tensors == len(words) - 3
    # The plan's tensors, with TFLM's lifetimes, never share bytes while
    # both are alive, and sit at multiples of 16.
    model = tflite._model(data)
    tensors, total = tflite.head_tensors(model)
    starts = np.cumsum([0] + [len(g.tensors) for g in model.subgraphs])
    offsets = [words[3 + starts[t.subgraph] + t.index] for t in tensors]
    if report.kept == "minimalloc":
        height = check_placement(
            [t.first for t in tensors], [t.last + 1 for t in tensors], [t.size for t in tensors], offsets,
            alignment=[16] * len(tensors),
        )
        assert height == report.minimalloc_head
    else:
        assert all(o == -1 for o in words[3:])
    assert report.minimalloc_head >= report.max_load
    # TFLM runs both and agrees, output for output.
    arena_plain = tflite.smallest_arena(data)
    arena_planned = tflite.smallest_arena(planned)
    assert arena_planned <= arena_plain, (arena_planned, arena_plain)
    assert report.greedy_arena == arena_plain
    inputs = random_inputs(data, 3, seed=len(data))
    want = run(data, arena_plain, inputs)
    got = run(planned, arena_planned, inputs)
    for w, g in zip(want, got):
        np.testing.assert_array_equal(w, g)


@pytest.mark.parametrize("path", MODELS[:2], ids=lambda p: p.stem)
def test_a_plan_is_replaced_not_added(path):
    once = tflite.plan_model(path.read_bytes(), timeout=0.2)
    twice = tflite.plan_model(once, timeout=0.2)
    assert len(offline_plan(twice)) == 1
    assert offline_plan(twice) == offline_plan(once)
    assert bytes(twice[4:8]) == b"TFL3"


def test_constant_data_stays_16_byte_aligned_in_the_file():
    data = MODELS[0].read_bytes()
    planned = tflite.plan_model(data, timeout=0.2)
    m = tflite._schema.Model.GetRootAs(planned, 0)
    for i in range(m.BuffersLength()):
        b = m.Buffers(i)
        if b.DataLength() > 0:
            start = b._tab.Vector(b._tab.Offset(4))
            assert start % 16 == 0, (i, start)


def test_lifetimes_follow_tflm_into_called_subgraphs():
    # A WHILE's subgraphs are counted inside the operator that runs them:
    # a tensor the WHILE reads lives past every count of its body.
    data = next(p for p in MODELS if p.stem == "while_loop").read_bytes()
    model = tflite._model(data)
    tensors, _ = tflite.head_tensors(model)
    by_graph = {s: [t for t in tensors if t.subgraph == s] for s in range(len(model.subgraphs))}
    assert by_graph[1] and by_graph[2]
    inner_last = max(t.last for s in (1, 2) for t in by_graph[s])
    while_inputs = [t for t in by_graph[0] if t.last >= inner_last]
    assert while_inputs, "no tensor of the main graph outlives the loop's subgraphs"


def test_not_a_model_is_a_clear_error():
    with pytest.raises(ValueError, match="not a TFLite flatbuffer"):
        tflite.plan_model(b"definitely not a model")


def test_the_command_line_plans_and_reports(tmp_path):
    src = MODELS[0]
    out = tmp_path / "planned.tflite"
    r = subprocess.run(
        [sys.executable, "-m", "minimalloc.tflite", str(src), str(out), "--timeout", "0.5"],
        capture_output=True, text=True, check=True,
    )
    assert "head bytes: TFLM greedy" in r.stdout
    assert "smallest arena in TFLM" in r.stdout
    assert len(offline_plan(out.read_bytes())) == 1
    bad = subprocess.run(
        [sys.executable, "-m", "minimalloc.tflite", str(tmp_path / "missing.tflite"), str(out)],
        capture_output=True, text=True,
    )
    assert bad.returncode == 1 and "minimalloc.tflite:" in bad.stderr and "Traceback" not in bad.stderr


def test_a_model_tflm_cannot_start_keeps_the_computed_comparison(monkeypatch):
    def refuse(model, **kwargs):
        raise RuntimeError("TFLM cannot start the model")

    monkeypatch.setattr(tflite, "smallest_arena", refuse)
    planned, report = tflite.plan_model_with_report(MODELS[0].read_bytes(), timeout=0.2)
    assert report.greedy_arena is None and report.minimalloc_arena is None
    assert report.kept == "minimalloc" and len(offline_plan(planned)) == 1


def test_constants_stored_after_the_flatbuffer_are_not_planned():
    # Models over 2 GB keep constant data after the flatbuffer: the buffer
    # has no data but an offset, and TFLM reads it from there.
    model = tflite._model(MODELS[0].read_bytes())
    tensors, _ = tflite.head_tensors(model)
    t = tensors[0]
    buffer = model.buffers[model.subgraphs[t.subgraph].tensors[t.index].buffer]
    buffer.offset, buffer.size = 1 << 31, t.size
    after, _ = tflite.head_tensors(model)
    assert (t.subgraph, t.index) not in {(u.subgraph, u.index) for u in after}
    assert len(after) == len(tensors) - 1


def test_the_readme_example_plans_and_runs_in_tflm(monkeypatch):
    root = pathlib.Path(__file__).resolve().parents[2]
    section = (root / "README.md").read_text().split("### TensorFlow Lite Micro", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(root)  # its model path is relative to the repository
    exec(compile(code, "README.md", "exec"), {})


def test_the_greedy_rule_matches_a_plain_first_fit_by_size():
    # TFLM's rule, computed a second way: every tensor, largest first, at
    # the lowest offset clear of the tensors placed before it that share
    # a count with it (a scan of every offset, for small cases).
    rng = np.random.default_rng(5)
    for _ in range(200):
        n = int(rng.integers(1, 12))
        ts = []
        for i in range(n):
            f = int(rng.integers(0, 10))
            ts.append(tflite.Tensor(0, i, 16 * int(rng.integers(1, 6)), f, f + int(rng.integers(0, 5))))
        got = tflite.greedy_offsets(ts)
        want = [0] * n
        done = []
        for i in sorted(range(n), key=lambda i: -ts[i].size):
            t, at = ts[i], 0
            while any(
                not (u.first > t.last or t.first > u.last) and at < want[j] + u.size and want[j] < at + t.size
                for j, u in ((j, ts[j]) for j in done)
            ):
                at += 16
            want[i] = at
            done.append(i)
        assert got == want, (ts, got, want)
