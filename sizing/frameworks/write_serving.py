"""A serving plan as the command that starts the engine: `vllm serve`, SGLang's
`python -m sglang.launch_server` or `trtllm-serve`, with tensor / pipeline / data parallelism,
the longest context, the memory share, the most sequences at once, the KV dtype, the weight
quantization and speculative settings, under a comment header saying what was sized by which
version of this tool. Every flag is one the engine's own parser takes
(sizing/data/engine_flags.json; tests/test_frameworks_engines.py)."""

from __future__ import annotations

import json
import shlex
from typing import NamedTuple

from sizing.validate import SizingError

SERVING_EMITS: tuple[str, ...] = ("vllm", "sglang", "trtllm")
# this tool's deployed formats -> each engine's --quantization (None: not a flag of that engine)
VLLM_QUANT = {"fp8": "fp8", "awq-int4-g128": "awq", "gptq-int4-g128": "gptq", "mxfp4": "mxfp4", "nvfp4": "modelopt_fp4",
              "int8-w8a8": "compressed-tensors", "fp8-block128": "fp8"}  # fmt: skip
SGLANG_QUANT = {"fp8": "fp8", "awq-int4-g128": "awq", "gptq-int4-g128": "gptq", "mxfp4": "mxfp4",
                "nvfp4": "modelopt_fp4", "int8-w8a8": "w8a8_int8", "fp8-block128": "fp8"}  # fmt: skip
DTYPES = {"bf16": "bfloat16", "fp16": "float16"}


class ServingPlan(NamedTuple):
    """What a serving answer chose, in the engines' terms."""

    model_id: str  # a hub id or path the engine loads
    summary: tuple[str, ...]  # the header's lines: what was sized and the answer
    tp: int
    pp: int
    dp: int  # replicas (data-parallel engines)
    max_model_len: int
    max_seqs: int
    weights: str  # a dtype (bf16, fp16, fp8...) or a deployed format (sizing.memory.FORMATS)
    kv_dtype: str
    utilization: float | None = None  # None: the engine's default
    prefix_caching: bool | None = None  # None: the engine's default
    speculative_tokens: int | None = None


def emit_serving(plan: ServingPlan, engine: str) -> str:
    if engine not in SERVING_EMITS:
        raise SizingError(f"--emit ({engine}) must be one of: {', '.join(SERVING_EMITS)} for a serving plan")
    from sizing import __version__

    words = {"vllm": _vllm, "sglang": _sglang, "trtllm": _trtllm}[engine](plan)
    head = [f"# Sized by transformer-sizing {__version__} (sizing serve)"] + [f"# {line}" for line in plan.summary]
    start = next(i for i, w in enumerate(words) if w.startswith("--"))
    body = [" ".join(shlex.quote(w) for w in words[:start])] + [
        "  " + " ".join(shlex.quote(w) for w in pair) for pair in _pairs(words[start:])
    ]
    return "\n".join(head + [" \\\n".join(body)]) + "\n"


def _pairs(words: list[str]) -> list[list[str]]:
    out: list[list[str]] = []
    for word in words:
        if word.startswith("--") or not out:
            out.append([word])
        else:
            out[-1].append(word)
    return out


def _weights(plan: ServingPlan, table: dict, engine: str) -> list[str]:
    if plan.weights in DTYPES:
        return ["--dtype", DTYPES[plan.weights]]
    if plan.weights in table:
        return ["--quantization", table[plan.weights]]
    raise SizingError(f"--emit {engine}: weights {plan.weights} have no {engine} --quantization; serve bf16, fp8, "
                      f"or one of {', '.join(table)}")  # fmt: skip


def _vllm(plan: ServingPlan) -> list[str]:
    words = ["vllm", "serve", plan.model_id, "--tensor-parallel-size", str(plan.tp),
             "--pipeline-parallel-size", str(plan.pp), "--data-parallel-size", str(plan.dp),
             "--max-model-len", str(plan.max_model_len), "--max-num-seqs", str(plan.max_seqs)]  # fmt: skip
    if plan.utilization is not None:
        words += ["--gpu-memory-utilization", f"{plan.utilization:g}"]
    words += _weights(plan, VLLM_QUANT, "vllm")
    if plan.kv_dtype == "fp8":
        words += ["--kv-cache-dtype", "fp8"]
    if plan.prefix_caching is not None:
        words.append("--enable-prefix-caching" if plan.prefix_caching else "--no-enable-prefix-caching")
    if plan.speculative_tokens:
        words += [
            "--speculative-config",
            json.dumps({"method": "eagle", "num_speculative_tokens": plan.speculative_tokens}),
        ]
    return words


def _sglang(plan: ServingPlan) -> list[str]:
    words = ["python", "-m", "sglang.launch_server", "--model-path", plan.model_id, "--tp-size", str(plan.tp),
             "--pp-size", str(plan.pp), "--dp-size", str(plan.dp), "--context-length", str(plan.max_model_len),
             "--max-running-requests", str(plan.max_seqs)]  # fmt: skip
    if plan.utilization is not None:
        words += ["--mem-fraction-static", f"{plan.utilization:g}"]
    words += _weights(plan, SGLANG_QUANT, "sglang")
    if plan.kv_dtype == "fp8":
        words += ["--kv-cache-dtype", "fp8_e4m3"]
    if plan.prefix_caching is False:
        words.append("--disable-radix-cache")
    if plan.speculative_tokens:
        words += ["--speculative-algorithm", "EAGLE", "--speculative-num-draft-tokens", str(plan.speculative_tokens)]
    return words


def _trtllm(plan: ServingPlan) -> list[str]:
    if plan.dp > 1:
        raise SizingError(
            f"--emit trtllm: trtllm-serve runs one replica; start {plan.dp} of them (this plan has "
            f"dp {plan.dp}), or --emit vllm / sglang"
        )
    if plan.weights not in DTYPES or plan.kv_dtype == "fp8" or plan.speculative_tokens:
        raise SizingError(
            "--emit trtllm: quantized weights, an fp8 KV cache and speculation are set in "
            "trtllm-serve's --extra_llm_api_options YAML, not its flags; --emit vllm / sglang"
        )
    words = [
        "trtllm-serve",
        plan.model_id,
        "--backend",
        "pytorch",
        "--tp_size",
        str(plan.tp),
        "--pp_size",
        str(plan.pp),
        "--max_batch_size",
        str(plan.max_seqs),
        "--max_seq_len",
        str(plan.max_model_len),
    ]
    if plan.utilization is not None:
        words += ["--kv_cache_free_gpu_memory_fraction", f"{plan.utilization:g}"]
    return words
