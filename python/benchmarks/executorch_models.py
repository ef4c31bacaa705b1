"""Arena bytes of real PyTorch models planned by ExecuTorch's default
planner and by minimalloc, and the lower bound.

    python python/benchmarks/executorch_models.py [--timeout 1] [--only NAME,...]

Needs the package with its ``executorch`` extra. Each model is exported
(torch.export, to_edge, to_executorch) twice: with the default planner and
with ``minimalloc.executorch.memory_planning_pass``; ours is checked by
ExecuTorch's verifier and run by the ExecuTorch runtime against eager
PyTorch, exactly as the tests do. Prints one row per model: the planned
tensors, both arenas (every method's non-constant buffers), how much
smaller ours is, the lower bound minimalloc proved for the top graph (the
max load, or more), whether minimalloc's plan or greedy's was kept, and
minimalloc's planning time (all calls; greedy's comparison run excluded).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

import et_models  # noqa: E402
from et_harness import compare  # noqa: E402
from minimalloc.executorch import memory_planning_pass  # noqa: E402

# The tested models, then larger ones built from torch alone.
MODELS = {
    **et_models.TESTED,
    "unet-128": lambda: et_models.UNet(widths=(32, 64, 128, 256), size=128),
    "mobilenet-224": lambda: et_models.MobileNet(size=224),
    "resnet-wide": lambda: et_models.ResNet(widths=(32, 64, 128, 256), blocks=3, size=64),
    "transformer-6x256-seq64": lambda: et_models.Decoder(layers=6, dim=256, heads=8, seq=64, vocab=1000),
    "transformer-6x256-seq256": lambda: et_models.Decoder(layers=6, dim=256, heads=8, seq=256, vocab=1000),
    "transformer-6x256-seq1024": lambda: et_models.Decoder(layers=6, dim=256, heads=8, seq=1024, vocab=1000),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=1.0, help="seconds per arena")
    parser.add_argument("--only", default="", help="comma-separated model names")
    args = parser.parse_args()
    names = [n for n in MODELS if not args.only or n in args.only.split(",")]
    print("| model | tensors | default bytes | minimalloc bytes | smaller by | lower bound | kept | plan time |")
    print("|---|---:|---:|---:|---:|---:|---|---:|")
    for name in names:
        torch.manual_seed(0)
        model = MODELS[name]()
        planning_pass = memory_planning_pass(timeout=args.timeout)
        started = time.perf_counter()
        got = compare(model, planning_pass, runs=getattr(model, "others", lambda: [])())
        del started
        reports = planning_pass.minimalloc.reports
        top = reports[-1]
        tensors = sum(a.buffers for r in reports for a in r.arenas)
        bound = sum(a.lower_bound for a in top.arenas)
        kept = ", ".join(sorted({r.kept for r in reports}))
        seconds = sum(r.seconds for r in reports)
        saved = 100.0 * (got["default"] - got["ours"]) / got["default"] if got["default"] else 0.0
        print(
            f"| {name} | {tensors} | {got['default']:,} | {got['ours']:,} | {saved:.1f}% | {bound:,} | {kept} | {seconds * 1000:.0f} ms |",
            flush=True,
        )


if __name__ == "__main__":
    main()
