"""`sizing memory --finetune full|lora|qlora` and the consumer GPUs people fine-tune on."""

import json

from click.testing import CliRunner

from sizing.cli import main
from sizing.inputs.hardware import get_gpu

GIB = 2**30


def _memory(*args):
    return CliRunner().invoke(main, ["memory", *args])


def test_llama3_8b_qlora_on_an_rtx4090_answers_term_by_term():
    out = _memory("--preset", "llama3-8b", "--gpu", "rtx4090", "--finetune", "qlora", "-T", "8192", "--format", "json")
    assert out.exit_code == 3, out.output  # at T = 8192 without recomputation: 69.13 GiB
    terms = json.loads(out.output)["per_gpu"]
    # Frozen base: the blocks' linears in NF4 with double quantisation, the rest bf16.
    # Linears: 32 x (2 x 4096^2 + 2 x 4096 x 1024 + 3 x 4096 x 14336) = 6,979,321,856 weights ->
    # 6,979,321,856 / 2 + 109,051,904 one-byte absmax + 4 x 425,984 fp32 constants = 3,600,416,768;
    # embedding + lm_head 2 x 128,256 x 4096 x 2 B = 2,101,346,304; norms 65 x 4096 x 2 B = 532,480.
    assert terms["base_weights_bytes"] == 3_600_416_768 + 2_101_346_304 + 532_480 == 5_702_295_552
    # Adapters r 16 on all linears: 32 x 16 x (2(4096+4096) + 2(4096+1024) + 3(4096+14336)) = 41,943,040
    assert terms["weights_bytes"] == 2 * 41_943_040 and terms["optimizer_bytes"] == 12 * 41_943_040
    assert (
        "would fit: --recompute full (19.68 GiB per GPU)"
        in _memory("--preset", "llama3-8b", "--gpu", "rtx4090", "--finetune", "qlora", "-T", "8192").output
    )


def test_qlora_with_full_recompute_fits_a_4090():
    out = _memory("--preset", "llama3-8b", "--gpu", "4090", "--finetune", "qlora", "--recompute", "full", "-T", "8192")
    assert out.exit_code == 0, out.output
    assert "21,134,467,076" in out.output  # 19.68 GiB < 24 GiB


def test_lora_rank_and_targets_change_the_adapters():
    args = ("--preset", "llama3-8b", "--gpu", "h100", "--finetune", "lora", "--format", "json")
    out = _memory(*args, "--lora-rank", "8", "--lora-targets", "q,v")
    terms = json.loads(out.output)["per_gpu"]
    # r 8 on q and v: 32 x 8 x ((4096+4096) + (4096+1024)) = 3,407,872 trained parameters, bf16
    assert terms["weights_bytes"] == 2 * 3_407_872
    # LoRA keeps the frozen base in bf16: 8,030,261,248 x 2 B
    assert terms["base_weights_bytes"] == 2 * 8_030_261_248


def test_finetune_full_is_the_ordinary_answer_and_bad_combinations_are_refused():
    plain = _memory("--preset", "llama2-7b", "--gpu", "h100", "-T", "2048", "--format", "json").output
    full = _memory("--preset", "llama2-7b", "--gpu", "h100", "--finetune", "full", "--format", "json").output
    assert plain == full  # a fine-tune, full or not, is sized at the fine-tuning context 2,048 by default
    bad = _memory("--preset", "llama2-7b", "--lora-rank", "8")
    assert bad.exit_code == 2 and "--lora-rank apply to --finetune lora or qlora" in bad.output
    bad = _memory("--preset", "llama2-7b", "--finetune", "qlora", "--lora-targets", "q,x")
    assert bad.exit_code == 2 and "--lora-targets" in bad.output
    bad = _memory("--preset", "llama2-7b", "--inference", "--finetune", "lora")
    assert bad.exit_code == 2 and "--finetune" in bad.output


def test_consumer_gpus_are_in_the_table_with_sources():
    # (key, GiB, dense bf16 TFLOP/s with FP32 accumulate) from NVIDIA's architecture whitepapers
    for name, key, gib, bf16 in (
        ("3090", "rtx3090", 24, 71),
        ("rtx 5090", "rtx5090", 32, 209.5),
        ("a6000", "rtx-a6000", 48, 154.8),
        ("4090", "rtx4090", 24, 165.2),
        ("l40s", "l40s", 48, 362.05),
    ):
        gpu = get_gpu(name)
        assert (gpu.key, gpu.memory_bytes, gpu.peak_tflops["bf16"]) == (key, gib * GIB, bf16)
        assert gpu.source


def test_a_finetune_defaults_to_a_finetuning_context_and_says_what_would_fit():
    """Issue 40: `memory --preset llama3-8b --gpu rtx4090 --finetune lora` sized the fine-tune at
    the pretraining T = 8192 (78.77 GiB, no suggestion). Now T = 2048 (DEFAULT_FINETUNE_SEQ_LEN)
    and every smallest change that fits is named."""
    out = _memory("--preset", "llama3-8b", "--gpu", "rtx4090", "--finetune", "lora")
    assert out.exit_code == 3, out.output
    assert "T = 2,048: the fine-tuning default" in out.output
    assert "would fit: --recompute full (19.02 GiB per GPU)" in out.output
    assert "would fit: --finetune qlora --recompute full" in out.output
    assert "would fit: --dp 4 --zero 3" in out.output
    longer = _memory("--preset", "llama3-8b", "--gpu", "rtx4090", "--finetune", "lora", "-T", "8192")
    assert "would fit: -T 1024 (23.48 GiB per GPU)" in longer.output
    assert "would fit: --gpu h100-sxm (78.77 GiB per GPU)" in longer.output
