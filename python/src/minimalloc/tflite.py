"""minimalloc as an offline planner for TensorFlow Lite Micro.

TFLite Micro (TFLM) runs a model inside one tensor arena. Its head section
holds the tensors that live only while the graph runs, placed by TFLM's
greedy planner when the interpreter starts, unless the model carries an
offline plan: a metadata entry named ``OfflineMemoryAllocation`` whose
buffer holds one arena offset per tensor of every subgraph (-1 where TFLM
should plan). :func:`plan_model` writes such a plan::

    from minimalloc.tflite import plan_model
    planned = plan_model(open("model.tflite", "rb").read(), timeout=1.0)

or from a shell: ``python -m minimalloc.tflite IN.tflite OUT.tflite``.

What the plan covers, as TFLM's allocator sees the model:

- every tensor TFLM places in the head: no constant data in the model, not
  a variable, more than zero bytes; its size rounded up to TFLM's 16-byte
  arena alignment, at a multiple of 16;
- lifetimes exactly as TFLM counts them: one count for subgraph 0's
  inputs, one per operator, and inside an operator that runs subgraphs
  (WHILE, IF, CALL_ONCE) first the counts of those subgraphs, so that a
  tensor an operator reads lives until its last reader returns; the
  subgraph's outputs live to its end. A tensor TFLM never reaches (a
  subgraph no operator calls) is left to TFLM;
- offsets are relative to the start of the head section, as TFLM reads
  them.

What TFLM still allocates itself: variable tensors (in the persistent
tail, where their state survives between invocations), the tail's own
structures, and the scratch buffers kernels ask for while preparing,
which its planner fits around the planned offsets. Where those make the
arena larger than TFLM's own plan, the plan of TFLM's greedy planner is
written instead (see :func:`plan_model`): the result never needs a larger
arena.

The flatbuffer is read and written with the schema TFLM's Python package
ships (``tflite-micro``, the ``tflite`` extra of minimalloc), and realigned
with its aligner, so constant buffers keep the 16-byte alignment the
schema requires.
"""

from __future__ import annotations

import argparse
import bisect
import contextlib
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from ._api import plan as _plan

try:
    import flatbuffers  # type: ignore[import-untyped]
    from tflite_micro.tensorflow.lite.micro.python import (  # type: ignore[import-untyped]
        schema_py_generated as _schema,
    )
except ImportError as error:  # pragma: no cover - depends on the environment
    raise ImportError(
        "minimalloc.tflite needs tflite-micro: pip install 'minimalloc[tflite]'"
    ) from error

OFFLINE_PLAN = "OfflineMemoryAllocation"
"""The metadata name TFLM reads an offline plan from."""
ALIGNMENT = 16
"""TFLM's arena alignment (``MicroArenaBufferAlignment``)."""
_FORMAT_VERSION = 0
"""Words 0 and 1 (version, subgraph count) are not read by TFLM."""
_ONLINE = -1

# Bytes per element of each TensorType, as TfLiteEvalTensorByteLength
# counts them (4-bit types are stored a byte per element in TFLM).
_ELEMENT_BYTES = {
    "FLOAT32": 4, "FLOAT16": 2, "INT32": 4, "UINT8": 1, "INT64": 8, "STRING": 1,
    "BOOL": 1, "INT16": 2, "COMPLEX64": 8, "INT8": 1, "FLOAT64": 8,
    "COMPLEX128": 16, "UINT64": 8, "RESOURCE": 0, "VARIANT": 0, "UINT32": 4,
    "UINT16": 2, "INT4": 1, "BFLOAT16": 2,
}
_TYPE_NAMES = {v: k for k, v in vars(_schema.TensorType).items() if not k.startswith("_")}
_OP_NAMES = {v: k for k, v in vars(_schema.BuiltinOperator).items() if not k.startswith("_")}


@dataclass(frozen=True)
class Tensor:
    """One tensor TFLM places in the head, as the plan sees it."""

    subgraph: int
    index: int
    """Index in its subgraph's tensor list."""
    size: int
    """Bytes, rounded up to the arena alignment."""
    first: int
    last: int
    """Inclusive range of TFLM's allocation counts during which it lives."""


@dataclass
class Report:
    """What :func:`plan_model` found and wrote."""

    tensors: int
    """Tensors in the model (every subgraph, constants included)."""
    planned: int
    """Tensors the written plan places (the others: -1, TFLM's)."""
    max_load: int
    """Most bytes of planned tensors alive at once: no plan is lower."""
    greedy_head: int
    """Head bytes under TFLM's greedy planner (computed from its rule)."""
    minimalloc_head: int
    """Head bytes under minimalloc's plan."""
    kept: str
    """Which plan was written: "minimalloc" or "greedy"."""
    planning_seconds: float
    greedy_arena: Optional[int] = None
    minimalloc_arena: Optional[int] = None
    """Smallest arena TFLM runs each plan in (bisected with the runtime;
    None where it was not run)."""

    @property
    def head(self) -> int:
        return self.minimalloc_head if self.kept == "minimalloc" else self.greedy_head


def _model(data: bytes) -> Any:
    if len(data) < 8 or bytes(data[4:8]) != b"TFL3":
        raise ValueError("not a TFLite flatbuffer (no TFL3 file identifier)")
    return _schema.ModelT.InitFromObj(_schema.Model.GetRootAs(bytes(data), 0))


def _op_name(model: Any, op: Any) -> str:
    code = model.operatorCodes[op.opcodeIndex]
    name: str = _OP_NAMES.get(max(code.builtinCode, code.deprecatedBuiltinCode), "CUSTOM")
    return name


def _called_subgraphs(model: Any, op: Any) -> List[int]:
    """The subgraphs an operator runs, in the order TFLM marks them."""
    opts = op.builtinOptions
    name = _op_name(model, op)
    if opts is None:
        # A malformed control-flow op without its options: TFLM would
        # not run it; it calls nothing here.
        return []
    if name == "IF":
        return [opts.thenSubgraphIndex, opts.elseSubgraphIndex]
    if name == "WHILE":
        return [opts.condSubgraphIndex, opts.bodySubgraphIndex]
    if name == "CALL_ONCE":
        return [opts.initSubgraphIndex]
    return []


def _byte_length(tensor: Any) -> int:
    shape = [] if tensor.shape is None else [int(d) for d in tensor.shape]
    count = 1
    for d in shape:
        count *= max(d, 0)
    return count * _ELEMENT_BYTES.get(_TYPE_NAMES.get(tensor.type, ""), 0)


def head_tensors(model: Any) -> Tuple[List[Tensor], int]:
    """The tensors TFLM plans in the head, with its lifetimes; and how many
    tensors the model has (the length of an offline plan)."""
    subgraphs = model.subgraphs or []
    first: List[List[int]] = [[_ONLINE] * len(g.tensors or []) for g in subgraphs]
    last: List[List[int]] = [[_ONLINE] * len(g.tensors or []) for g in subgraphs]
    count = 0

    def created(s: int, t: int) -> None:
        if first[s][t] == _ONLINE:
            first[s][t] = count

    def used(s: int, t: int) -> None:
        last[s][t] = count

    def mark(s: int) -> None:
        # TFLM's AllocationInfoBuilder::MarkAllocationLifetimes, one count
        # per operator, nested subgraphs counted inside their operator.
        nonlocal count
        g = subgraphs[s]
        for t in g.inputs if g.inputs is not None else []:
            created(s, t)
            used(s, t)
        for op in g.operators or []:
            count += 1
            outputs = [int(t) for t in (op.outputs if op.outputs is not None else [])]
            for t in outputs:
                created(s, t)
            for called in _called_subgraphs(model, op):
                count += 1
                mark(called)
            for t in op.inputs if op.inputs is not None else []:
                if t >= 0:
                    used(s, int(t))
            for t in outputs:
                used(s, t)
        for t in g.outputs if g.outputs is not None else []:
            created(s, t)
            used(s, t)

    if subgraphs:
        mark(0)
    buffers = model.buffers or []
    tensors: List[Tensor] = []
    total = 0
    for s, g in enumerate(subgraphs):
        for i, t in enumerate(g.tensors or []):
            total += 1
            buffer = buffers[t.buffer] if 0 <= t.buffer < len(buffers) else None
            # Constant data is in the flatbuffer, or (models over 2 GB)
            # after it, at the buffer's offset.
            data = None if buffer is None else buffer.data
            constant = (data is not None and len(data) > 0) or (buffer is not None and buffer.offset > 1)
            size = _byte_length(t)
            if constant or t.isVariable or size == 0 or first[s][i] == _ONLINE:
                continue
            aligned = -(-size // ALIGNMENT) * ALIGNMENT
            tensors.append(Tensor(s, i, aligned, first[s][i], last[s][i]))
    return tensors, total


def greedy_offsets(tensors: Sequence[Tensor]) -> List[int]:
    """Where TFLM's GreedyMemoryPlanner puts `tensors` when it plans them
    itself: largest first, each at the lowest offset where it meets none
    of those placed before it that share a count with it."""
    order = sorted(range(len(tensors)), key=lambda i: -tensors[i].size)
    # Kept in offset order, as TFLM's list is: a walk finds the lowest gap.
    placed: List[Tuple[int, int, int, int]] = []  # (offset, top, first, last)
    offsets = [0] * len(tensors)
    for i in order:
        t = tensors[i]
        at = 0
        for lo, hi, f, l in placed:
            if f > t.last or t.first > l:
                continue
            if lo - at >= t.size:
                break
            at = max(at, hi)
        offsets[i] = at
        bisect.insort(placed, (at, at + t.size, t.first, t.last))
    return offsets


def _height(tensors: Sequence[Tensor], offsets: Sequence[int]) -> int:
    return max((o + t.size for t, o in zip(tensors, offsets)), default=0)


def _max_load(tensors: Sequence[Tensor]) -> int:
    events: Dict[int, int] = {}
    for t in tensors:
        events[t.first] = events.get(t.first, 0) + t.size
        events[t.last + 1] = events.get(t.last + 1, 0) - t.size
    load = best = 0
    for k in sorted(events):
        load += events[k]
        best = max(best, load)
    return best


def _with_plan(model: Any, plan: Sequence[int]) -> bytes:
    """The model's bytes with `plan` (one offset per tensor) as its
    offline plan, replacing any plan it had; realigned."""
    words = np.array([_FORMAT_VERSION, len(model.subgraphs or []), len(plan), *plan], dtype="<i4")
    buffer = _schema.BufferT()
    buffer.data = np.frombuffer(words.tobytes(), dtype=np.uint8)
    metadata = [m for m in (model.metadata or []) if (m.name or b"") not in (OFFLINE_PLAN, OFFLINE_PLAN.encode())]
    model.buffers = list(model.buffers or []) + [buffer]
    entry = _schema.MetadataT()
    entry.name = OFFLINE_PLAN
    entry.buffer = len(model.buffers) - 1
    model.metadata = metadata + [entry]
    builder = flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return _realign(bytes(builder.Output()))


def _realign(data: bytes) -> bytes:
    """Rewritten by TFLM's aligner (the C++ flatbuffers API honours the
    schema's 16-byte alignment of constant buffers; Python's does not)."""
    from tflite_micro.tensorflow.lite.micro.tools import (  # type: ignore[import-untyped]
        tflite_flatbuffer_align_wrapper as aligner,
    )

    with tempfile.TemporaryDirectory() as tmp:
        raw, out = os.path.join(tmp, "in.tflite"), os.path.join(tmp, "out.tflite")
        with open(raw, "wb") as f:
            f.write(data)
        aligner.align_tflite_model(raw, out)
        with open(out, "rb") as f:
            return f.read()


def _offline_plan(total: int, model: Any, tensors: Sequence[Tensor], offsets: Sequence[int]) -> List[int]:
    starts, n = [], 0
    for g in model.subgraphs or []:
        starts.append(n)
        n += len(g.tensors or [])
    plan = [_ONLINE] * total
    for t, o in zip(tensors, offsets):
        plan[starts[t.subgraph] + t.index] = int(o)
    return plan


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """TFLM's runtime logs to the process's stdout and stderr, below
    Python; bisection makes it fail on purpose many times."""
    saved = [os.dup(1), os.dup(2)]
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(null, 1)
        os.dup2(null, 2)
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in saved + [null]:
            os.close(fd)


def _runtime() -> Any:
    from tflite_micro.python.tflite_micro import runtime  # type: ignore[import-untyped]

    return runtime


def smallest_arena(model: bytes, *, upper: int = 1 << 30) -> int:
    """The smallest ``arena_size`` TFLM's interpreter starts `model` in
    (bisection: allocation either fits or fails)."""
    runtime = _runtime()

    def start(n: int) -> bool:
        try:
            with _quiet():
                runtime.Interpreter.from_bytes(model, arena_size=n)
            return True
        except Exception:  # the runtime raises RuntimeError, or others
            return False

    def fits(n: int) -> bool:
        # Each try runs in a child: the runtime can crash the process
        # when an arena is too small even for its own bookkeeping.
        if not hasattr(os, "fork"):  # pragma: no cover - not on Linux
            return start(n)
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            import faulthandler

            faulthandler.disable()  # a crash here is an answer, not a report
            os._exit(0 if start(n) else 1)
        _, status = os.waitpid(pid, 0)
        return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0

    lo, hi = 0, 1024
    while not fits(hi):
        lo, hi = hi, hi * 2
        if hi > upper:
            raise RuntimeError(f"TFLM cannot start the model in {upper} bytes")
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if fits(mid):
            hi = mid
        else:
            lo = mid
    return hi


def plan_model_with_report(
    model: bytes, *, timeout: float = 1.0, measure: bool = True, **options: Any
) -> Tuple[bytes, Report]:
    """:func:`plan_model`, with what it found."""
    parsed = _model(model)
    tensors, total = head_tensors(parsed)
    started = time.perf_counter()
    greedy = greedy_offsets(tensors)
    ours = list(greedy)
    if tensors:
        options.setdefault("minimize", True)
        result = _plan(
            [t.first for t in tensors],
            [t.last for t in tensors],
            [t.size for t in tensors],
            alignment=[ALIGNMENT] * len(tensors),
            lifetime="inclusive",
            timeout=timeout,
            check=True,
            **options,
        )
        assert result.offsets is not None  # check=True raised otherwise
        ours = [int(o) for o in result.offsets]
    seconds = time.perf_counter() - started
    report = Report(
        tensors=total,
        planned=len(tensors),
        max_load=_max_load(tensors),
        greedy_head=_height(tensors, greedy),
        minimalloc_head=_height(tensors, ours),
        kept="minimalloc",
        planning_seconds=seconds,
    )
    planned = _with_plan(parsed, _offline_plan(total, parsed, tensors, ours))
    if report.greedy_head < report.minimalloc_head:
        report.kept = "greedy"
    if measure:
        # Scratch buffers, which TFLM fits around a plan, are known only
        # to its kernels: the arena is measured with both plans. A model
        # this build of TFLM cannot start (an op it lacks) keeps the
        # comparison of the computed heads.
        try:
            greedy_arena = smallest_arena(_with_plan(_model(model), [_ONLINE] * total))
        except RuntimeError:
            greedy_arena = None
        if greedy_arena is not None:
            report.greedy_arena = greedy_arena
            report.minimalloc_arena = smallest_arena(planned)
            report.kept = "greedy" if greedy_arena < report.minimalloc_arena else "minimalloc"
    if report.kept == "greedy":
        # A plan of -1s: TFLM plans every tensor itself, as without one.
        planned = _with_plan(_model(model), [_ONLINE] * total)
    return planned, report


def plan_model(model: bytes, *, timeout: float = 1.0, **options: Any) -> bytes:
    """`model` (a .tflite flatbuffer) with an offline plan of its head
    section in its metadata, any plan it had replaced.

    The head's tensors are minimised by minimalloc within `timeout`
    seconds (`options` are :func:`minimalloc.plan`'s: ``seed``,
    ``threads``, ...). The plan written is minimalloc's unless TFLM's own
    greedy plan is smaller, computed from the plans and, since kernels'
    scratch buffers are placed by TFLM around the plan, measured by
    starting TFLM's interpreter with each (outside the timeout): the
    returned model never needs a larger arena than TFLM's own plan.
    """
    return plan_model_with_report(model, timeout=timeout, **options)[0]


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m minimalloc.tflite",
        description="Write an offline memory plan into a .tflite model for TFLite Micro.",
    )
    parser.add_argument("input", help="the .tflite model")
    parser.add_argument("output", help="where to write the planned model")
    parser.add_argument("--timeout", type=float, default=1.0, help="seconds minimalloc may plan (default 1)")
    parser.add_argument("--no-run", action="store_true", help="do not start TFLM to measure the arenas")
    args = parser.parse_args(argv)
    try:
        with open(args.input, "rb") as f:
            data = f.read()
        planned, r = plan_model_with_report(data, timeout=args.timeout, measure=not args.no_run)
    except (OSError, ValueError, RuntimeError) as error:
        print(f"minimalloc.tflite: {error}", file=sys.stderr)
        return 1
    with open(args.output, "wb") as f:
        f.write(planned)
    print(f"tensors {r.tensors}, planned {r.planned} (the others are constants, variables or TFLM's)")
    print(f"head bytes: TFLM greedy {r.greedy_head}, minimalloc {r.minimalloc_head}, max load {r.max_load}")
    if r.greedy_arena is not None:
        print(f"smallest arena in TFLM: greedy plan {r.greedy_arena}, minimalloc plan {r.minimalloc_arena}")
    print(f"wrote {args.output} with the {r.kept} plan ({r.planning_seconds:.3f} s planning)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
