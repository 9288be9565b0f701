"""The options of `sizing memory`, grouped by what they ask about: the training run, the GPU and
fine-tuning, inference, and the serving engine (cli/memory.py applies them in this order). Each
is the shared option of sizing/cli/spec_table.py; what differs here is stated in the call."""

from __future__ import annotations

from sizing.cli.option_layer import option, options

training_options = options(
    option("seq_len", help="Tokens per sequence (default: the preset's context)."),
    option("micro_batch", help="Sequences per GPU per step.  [default: 1]"),
    option("precision"),
    option("optimizer"),
    option("zero"),
    option("dp", default=1, help="Data-parallel degree (ZeRO shards over it)."),
    option("recompute"),
    option("attention_impl"),
)

gpu_and_finetune_options = options(
    option("gpu", help="GPU name (see `sizing gpus`).  [default: h100-sxm, or the preset's published run's GPU]"),
    option(
        "finetune",
        help="Training: full (every weight trains), lora or qlora (frozen bf16 / NF4 base, adapters "
        "train).  [default: full]",
    ),
    option("lora_rank"),
    option("lora_targets"),
    option(
        "runtime_reserve",
        help="Memory the process holds beyond its tensors (CUDA context, NCCL, allocator), taken off the GPU "
        "before the fit.  [default: 0.5 GiB CUDA context + 0.25 GiB NCCL with --dp > 1; docs/memory.md]",
    ),
)

inference_options = options(
    option("inference"),
    option(
        "context", help="Inference: tokens in the KV cache per sequence (default: --seq-len or the preset's context)."
    ),
    option("batch", help="Inference: sequences decoded together.  [default: 1]"),
    option("weight_dtype", help="Inference: weight dtype.  [default: bf16]"),
    option("kv_dtype", help="Inference: KV cache dtype.  [default: bf16]"),
    option(
        "prefill_chunk",
        help="Inference: tokens per prefill forward (chunked prefill; up to batch x context for a batch "
        "prefilled at once).  [default: one sequence's context]",
    ),
    option(
        "images",
        default=None,
        help="Inference, a vision-language preset: images in each prompt (their tokens join it).  [default: 1]",
    ),
    option("image_size", default=None, help="Inference, a vision-language preset: HEIGHTxWIDTH.  [default: 896x896]"),
    option(
        "quant",
        help="Inference: a deployed weight format (GPTQ/AWQ, MXFP4, NVFP4, fp8, GGUF) with its real "
        "bits per weight and 16-bit tensors, instead of --weight-dtype.",
    ),
)

engine_options = options(
    option("engine"), option("gpu_memory_utilization"), option("max_num_batched_tokens"), option("max_num_seqs")
)

# inference under tensor parallelism: memory per GPU
tp_option = option("tp", help="Inference: tensor-parallel GPUs; memory per GPU (weights / tp, its KV heads).  "
                   "[default: 1]")  # fmt: skip
