"""Time the reference model's generate() for sizing.serve: time to first token and decode
tokens/s at each batch of the plan (sizing/serve/bench.py SERVE_BENCH), on one device.

    python -m reference_model.profile.serve_bench --device cuda --out serve-bench.json
    python -m reference_model.profile.serve_bench --device cpu --tiny --out /tmp/x.json   # functional test only

TTFT = the median time of generate(prompt, 1) (the prefill and one sample); decode time = the
median of generate(prompt, O) minus that, over O - 1 decode steps; decode tokens/s = b·(O - 1)
/ decode time. CUDA: torch.cuda.synchronize around each call. The model is eager (no CUDA
graphs, no torch.compile): at small batches kernel launches, not bandwidth, can set the time,
which the ratio to the roofline shows. A CPU run is a functional test, never a performance
figure (its JSON says so and the report refuses it).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

import torch

from reference_model.model import build, small_config
from reference_model.profile.env import environment
from sizing.serve import SERVE_BENCH

_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


def _timed(fn, device: torch.device) -> float:
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    start = time.perf_counter()
    fn()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return time.perf_counter() - start


def time_generate(model, batch: int, prompt: int, output: int, repeats: int, device: torch.device) -> dict[str, Any]:
    """{batch, ttft_seconds, decode_seconds, decode_tokens_per_second} for one batch size."""
    idx = torch.randint(0, model.config.vocab_size, (batch, prompt), device=device)
    model.generate(idx, 2, temperature=0)  # warm-up (allocations, kernel selection)
    first = [_timed(lambda: model.generate(idx, 1, temperature=0), device) for _ in range(repeats)]
    whole = [_timed(lambda: model.generate(idx, output, temperature=0), device) for _ in range(repeats)]
    ttft = statistics.median(first)
    decode = max(statistics.median(whole) - ttft, 1e-9)
    return {
        "batch": batch,
        "ttft_seconds": ttft,
        "decode_seconds": decode,
        "decode_tokens_per_second": batch * (output - 1) / decode,
    }


def run(device_name: str = "cuda", tiny: bool = False) -> dict[str, Any]:
    plan = SERVE_BENCH
    device = torch.device(device_name)
    cfg = small_config(plan.config()) if tiny else plan.config()
    prompt, output, batches = (8, 4, (1, 2)) if tiny else (plan.prompt, plan.output, plan.batches)
    dtype = torch.float32 if device.type == "cpu" else _DTYPES[plan.dtype]
    model = build(cfg, device=device, dtype=dtype, seed=0, attn_impl="flash").eval()
    env = environment(device)
    from sizing.inputs import gpu_for_device_name

    gpu = gpu_for_device_name(env["device_name"]) if device.type == "cuda" else None
    points = []
    for b in batches:
        try:
            points.append(time_generate(model, b, prompt, output, plan.repeats, device))
        except torch.OutOfMemoryError:
            points.append({"batch": b, "error": "out of memory"})
    return {
        "run": plan.run,
        "tiny": tiny,
        "functional_test_only": device.type != "cuda" or tiny,
        "gpu": gpu.key if gpu else None,
        "dtype": "fp32" if device.type == "cpu" else plan.dtype,
        "prompt": prompt,
        "output": output,
        "environment": env,
        "points": points,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--tiny", action="store_true", help="a toy-size model (functional test)")
    parser.add_argument("--out", required=True, help="JSON file to write")
    args = parser.parse_args(argv)
    result = run(args.device, args.tiny)
    Path(args.out).write_text(json.dumps(result, indent=2, allow_nan=False) + "\n")
    for p in result["points"]:
        if "error" in p:
            print(f"batch {p['batch']}: {p['error']}")
        else:
            ttft, tps = p["ttft_seconds"] * 1e3, p["decode_tokens_per_second"]
            print(f"batch {p['batch']}: TTFT {ttft:.2f} ms, {tps:,.1f} decode tokens/s")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
