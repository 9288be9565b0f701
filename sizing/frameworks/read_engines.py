"""Serving engines' command lines: `vllm serve MODEL ...` (or python -m
vllm.entrypoints.openai.api_server --model ...), SGLang's `python -m sglang.launch_server
--model-path ...` and `trtllm-serve MODEL ...`, by the flags of the engines' own argument
definitions (sizing/data/engine_flags.json: vLLM EngineArgs, SGLang ServerArgs; TensorRT-LLM's
trtllm-serve options as its documentation lists them)."""

from __future__ import annotations

import json
from typing import Any

from sizing.frameworks.models import hub_model
from sizing.frameworks.settings import FileSettings, Reading, boolean, integer
from sizing.frameworks.text import split_command
from sizing.validate import SizingError

# an engine's --quantization -> this tool's deployed format (sizing.memory.FORMATS)
QUANT_FORMATS = {"fp8": "fp8", "awq": "awq-int4-g128", "awq_marlin": "awq-int4-g128", "gptq": "gptq-int4-g128",
                 "gptq_marlin": "gptq-int4-g128", "mxfp4": "mxfp4", "modelopt_fp4": "nvfp4", "nvfp4": "nvfp4",
                 "w8a8_int8": "int8-w8a8", "w8a8_fp8": "fp8"}  # fmt: skip
KV_DTYPES = {"auto": None, "fp8": "fp8", "fp8_e4m3": "fp8", "fp8_e5m2": "fp8", "bf16": "bf16", "bfloat16": "bf16"}
WEIGHT_DTYPES = {"auto": None, "bfloat16": "bf16", "bf16": "bf16", "float16": "fp16", "half": "fp16", "fp16": "fp16"}


def _ratio(value: Any) -> float:
    number = float(value)
    if not 0 < number <= 1:
        raise ValueError("must be a number in (0, 1]")
    return number


def _table(converter):
    def convert(value):
        key = str(value).lower()
        if key not in converter:
            raise ValueError(f"must be one of {', '.join(converter)}")
        return converter[key]

    return convert


# flag (without --, dashes as underscores) -> (knob, converter); one engine's table each
VLLM = {
    "tensor_parallel_size": ("tp", integer), "tp": ("tp", integer),
    "pipeline_parallel_size": ("pp", integer), "pp": ("pp", integer),
    "data_parallel_size": ("dp", integer), "dp": ("dp", integer),
    "max_model_len": ("context", integer), "gpu_memory_utilization": ("gpu_memory_utilization", _ratio),
    "max_num_seqs": ("batch", integer), "max_num_batched_tokens": ("max_num_batched_tokens", integer),
    "kv_cache_dtype": ("kv_dtype", _table(KV_DTYPES)), "quantization": ("quant", _table(QUANT_FORMATS)),
    "dtype": ("weight_dtype", _table(WEIGHT_DTYPES)), "block_size": ("block_size", integer),
}  # fmt: skip
SGLANG = {
    "tp_size": ("tp", integer), "tp": ("tp", integer), "tensor_parallel_size": ("tp", integer),
    "pp_size": ("pp", integer), "dp_size": ("dp", integer), "dp": ("dp", integer),
    "context_length": ("context", integer), "mem_fraction_static": ("gpu_memory_utilization", _ratio),
    "max_running_requests": ("batch", integer), "chunked_prefill_size": ("prefill_chunk", integer),
    "kv_cache_dtype": ("kv_dtype", _table(KV_DTYPES)), "quantization": ("quant", _table(QUANT_FORMATS)),
    "dtype": ("weight_dtype", _table(WEIGHT_DTYPES)), "page_size": ("block_size", integer),
    "speculative_num_draft_tokens": ("k", integer),
}  # fmt: skip
TRTLLM = {
    "tp_size": ("tp", integer), "pp_size": ("pp", integer), "max_batch_size": ("batch", integer),
    "max_seq_len": ("context", integer), "max_num_tokens": ("max_num_batched_tokens", integer),
    "kv_cache_free_gpu_memory_fraction": ("gpu_memory_utilization", _ratio),
}  # fmt: skip
ENGINES = {"vllm": VLLM, "sglang": SGLANG, "trtllm": TRTLLM}


def engine_of(words: list[str]) -> str | None:
    """Which engine a command line starts: vllm serve, sglang.launch_server, trtllm-serve."""
    text = " ".join(words[:6])
    if "trtllm-serve" in text:
        return "trtllm"
    if "sglang" in text:
        return "sglang"
    if "vllm" in text:
        return "vllm"
    return None


def read_engine_command(path: str, text: str, engine: str | None = None) -> FileSettings:
    words = split_command(text, path)
    engine = engine or engine_of(words)
    if engine is None:
        raise SizingError(f"{path}: not a vllm serve, sglang launch_server or trtllm-serve command line")
    model, args = _parse(words, path)
    r = Reading(path, engine, args)
    if model is not None:
        r.fields["model"] = model
    for name in ("model", "model_path"):
        if r.has(name):
            hub_model(r, name)
            break
    table = ENGINES[engine]
    for flag, (key, convert) in table.items():
        r.take(key, flag, convert)
    _gpus(r)
    r.set("inference", True)
    if engine in ("vllm", "sglang"):
        r.set("engine", engine)
    _switches(r, engine)
    return r.done()


def _gpus(r: Reading) -> None:
    """GPUs in all: tp x pp x dp, when the command splits over more than tensor parallelism."""
    keys = {k.key: k.value for k in r.knobs}
    if keys.get("dp", 1) > 1 or keys.get("pp", 1) > 1:
        names = [n for n in ("tensor_parallel_size", "tp_size", "tp", "pipeline_parallel_size", "pp_size", "pp",
                             "data_parallel_size", "dp_size", "dp") if n in r.fields]  # fmt: skip
        r.set("gpus", keys.get("tp", 1) * keys.get("pp", 1) * keys.get("dp", 1), *names)


def _switches(r: Reading, engine: str) -> None:
    if engine == "vllm":
        for name, on in (("enable_prefix_caching", True), ("no_enable_prefix_caching", False)):
            if r.has(name) and boolean(r.get(name)):
                r.set("prefix_caching", on, name)
        if r.has("num_scheduler_steps"):
            r.note("num_scheduler_steps (vLLM 0.6-0.9 multi-step scheduling; gone from V1 and vLLM 0.34): the "
                   "step model's calibrated per-step overhead is kept", "num_scheduler_steps")  # fmt: skip
        spec = r.get("speculative_config")
        if spec is not None:
            try:
                tokens = json.loads(spec).get("num_speculative_tokens") if isinstance(spec, str) else None
            except (ValueError, AttributeError):
                raise r.fail("speculative_config", "must be a JSON object") from None
            if tokens is not None:
                r.set("k", integer(tokens), "speculative_config")
    if engine == "sglang" and r.has("disable_radix_cache") and boolean(r.get("disable_radix_cache")):
        r.set("prefix_caching", False, "disable_radix_cache")


def _parse(words: list[str], where: str) -> tuple[str | None, dict[str, Any]]:
    """(the positional model, {flag: value}) after the program words: `vllm serve MODEL`,
    `trtllm-serve [serve] MODEL`, `python -m module` (the model is then a flag)."""
    rest = list(words)
    while rest and "=" in rest[0] and not rest[0].startswith("-"):  # VAR=value prefixes
        rest.pop(0)
    if rest[:1] and rest[0] in ("python", "python3") and rest[1:2] == ["-m"]:
        rest = rest[3:]
    elif rest[:2] == ["vllm", "serve"] or (rest[:1] and rest[0].endswith("trtllm-serve")):
        rest = rest[2:] if rest[0] == "vllm" else rest[1:]
        rest = rest[1:] if rest[:1] == ["serve"] else rest
    model = rest.pop(0) if rest and not rest[0].startswith("-") else None
    args: dict[str, Any] = {}
    i = 0
    while i < len(rest):
        word = rest[i]
        if not word.startswith("-"):
            raise SizingError(f"{where}: {word!r} is not a --flag")
        name, eq, value = word.lstrip("-").partition("=")
        dest = name.replace("-", "_")
        if eq:
            args[dest] = value
        elif i + 1 < len(rest) and not rest[i + 1].startswith("--"):
            args[dest], i = rest[i + 1], i + 1
        else:
            args[dest] = True
        i += 1
    return model, args
