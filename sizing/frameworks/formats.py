"""The file formats `--from` reads, by name: alone in this module so that building the
`--from-format` option (every command that takes --from) imports nothing else (start-up)."""

# format -> what it is (the --from-format choices, in --help order)
READ_FORMATS: dict[str, str] = {
    "torchtitan": "torchtitan train config (.toml)",
    "megatron": "Megatron-LM command line (pretrain_gpt.py --tensor-model-parallel-size ...)",
    "megatron-yaml": "Megatron-LM --yaml-cfg or a Megatron-Bridge recipe YAML (the same argument names)",
    "nemo": "NeMo 2 recipe YAML (trainer.strategy, data, peft, optim)",
    "deepspeed": "DeepSpeed JSON config",
    "hf-trainer": "Hugging Face TrainingArguments JSON",
    "accelerate": "accelerate config YAML (FSDP or DeepSpeed)",
    "axolotl": "axolotl YAML",
    "vllm": "vllm serve command line",
    "sglang": "SGLang launch_server command line",
    "trtllm": "trtllm-serve command line",
}
