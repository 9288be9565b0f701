"""The options of `sizing memory`, grouped by what they ask about: the training run, the GPU and
fine-tuning, inference, and the serving engine (cli/memory.py applies them in this order). Each
is the shared option of sizing/cli/spec_table.py; what differs here is stated in the call."""

from __future__ import annotations

from sizing.cli.option_layer import option, options

TRAINING, INFERENCE = ("!inference",), ("inference",)  # when an option applies (the form disables it otherwise)

training_options = options(
    option(
        "seq_len",
        help="Tokens per sequence.  [default: the preset's training context, or the config's pretraining context "
        "(else 4,096); with --finetune, 2,048, a fine-tuning context (axolotl's and NeMo's SFT recipes)]",
    ),
    option("micro_batch", help="Sequences per GPU per step.  [default: 1]", needs=TRAINING),
    option("precision", needs=TRAINING),
    option("optimizer", needs=TRAINING),
    option("zero", needs=TRAINING),
    option("dp", default=1, help="Data-parallel degree (ZeRO shards over it).", needs=TRAINING),
    option("recompute", needs=TRAINING),
    option("attention_impl", needs=TRAINING),
)

gpu_and_finetune_options = options(
    option("gpu", help="GPU name (see `sizing gpus`).  [default: h100-sxm, or the preset's published run's GPU]"),
    option(
        "finetune",
        help="Training: full (every weight trains), lora or qlora (frozen bf16 / NF4 base, adapters "
        "train).  [default: full]",
        needs=TRAINING,
    ),
    option("lora_rank", needs=(*TRAINING, "finetune=lora|qlora")),
    option("lora_targets", needs=(*TRAINING, "finetune=lora|qlora")),
    option("lora_base", needs=(*TRAINING, "finetune=lora|qlora")),
    option("lora_trained", needs=(*TRAINING, "finetune=lora|qlora")),
    option("cross_entropy", needs=TRAINING),
    option("selective", needs=TRAINING),
    option(
        "offload_params",
        help="LoRA/QLoRA: the frozen base in CPU memory (FSDP CPUOffload, FSDP-QLoRA).",
        needs=(*TRAINING, "finetune=lora|qlora"),
    ),
    option(
        "runtime_reserve",
        help="Memory the process holds beyond its tensors (CUDA context, NCCL, allocator), taken off the GPU "
        "before the fit.  [default: 0.5 GiB CUDA context + 0.25 GiB NCCL with --dp > 1; docs/memory.md]",
    ),
)

inference_options = options(
    option("inference"),
    option(
        "context",
        help="Inference: tokens in the KV cache per sequence (default: --seq-len or the preset's context).",
        needs=INFERENCE,
    ),
    option("batch", help="Inference: sequences decoded together.  [default: 1]", needs=INFERENCE),
    option("weight_dtype", help="Inference: weight dtype.  [default: bf16]", needs=(*INFERENCE, "!quant")),
    option("kv_dtype", help="Inference: KV cache dtype.  [default: bf16]", needs=INFERENCE),
    option(
        "prefill_chunk",
        help="Inference: tokens per prefill forward (chunked prefill; up to batch x context for a batch "
        "prefilled at once).  [default: one sequence's context]",
        needs=INFERENCE,
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
        needs=(*INFERENCE, "!weight-dtype"),
    ),
)

engine_options = options(
    option("engine", needs=INFERENCE),
    option("gpu_memory_utilization", needs=(*INFERENCE, "engine")),
    option("max_num_batched_tokens", needs=(*INFERENCE, "engine")),
    option("max_num_seqs", needs=(*INFERENCE, "engine")),
)

# inference under tensor parallelism: memory per GPU
tp_option = option("tp", help="Inference: tensor-parallel GPUs; memory per GPU (weights / tp, its KV heads).  "
                   "[default: 1]", needs=INFERENCE)  # fmt: skip
