"""--from FILE (sizing.frameworks): every example file of examples/files/ read into the options it
means, each knob with its field, the rest listed; a file and the same flags ask the same question;
an explicit flag wins; bad fields are one line naming the field."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from sizing.cli import main
from sizing.frameworks import detect_format, read_settings
from sizing.frameworks.text import read_text

EX = Path(__file__).resolve().parents[1] / "examples" / "files"


def _run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _knobs(name: str) -> dict:
    return {k.key: k.value for k in read_settings(str(EX / name)).knobs}


# file -> (format, knobs it must set exactly)
EXPECTED = {
    "torchtitan_llama3_8b.toml": ("torchtitan", dict(preset="llama3.1-8b", seq_len=8192, tp=2, sp=True, fsdp="full",
        dp=32, micro_batch=1, global_batch=512, tokens=3000 * 512 * 8192, recompute="selective", selective="op",
        stack="torchtitan-compile", grad_reduce="fp32", precision="bf16-mixed")),
    "megatron_llama3_70b.sh": ("megatron", dict(preset="llama3-70b", gpus=64, tp=8, pp=4, sp=True, zero=1,
        micro_batch=1, global_batch=256, seq_len=8192, recompute="selective", precision="bf16-mixed",
        tokens=1000 * 256 * 8192)),
    "bridge_llama3_8b.yaml": ("megatron-yaml", dict(tp=2, pp=1, sp=True, zero=1, grad_reduce="fp32", seq_len=8192,
        global_batch=128, tokens=500 * 128 * 8192)),
    "nemo_llama3_8b_lora.yaml": ("nemo", dict(preset="llama3-8b", gpus=8, finetune="lora", lora_rank=16, seq_len=2048,
        global_batch=32, precision="bf16-mixed", optimizer="adamw")),
    "deepspeed_zero3.json": ("deepspeed", dict(zero=3, offload_optimizer=True, micro_batch=2, global_batch=64, dp=8,
        precision="bf16-mixed", optimizer="adamw")),
    "hf_training_args.json": ("hf-trainer", dict(micro_batch=2, micro_batches=8, recompute="full", fsdp="full",
        cross_entropy="chunked", precision="bf16-mixed")),
    "accelerate_fsdp.yaml": ("accelerate", dict(gpus=8, fsdp="full", recompute="full", stack="fsdp")),
    "axolotl_qwen3_32b_qlora.yml": ("axolotl", dict(preset="qwen3-32b", finetune="qlora", lora_rank=32, seq_len=4096,
        micro_batch=1, optimizer="adam8bit", recompute="full", attention_impl="flash", cross_entropy="chunked")),
    "vllm_serve.sh": ("vllm", dict(preset="llama3.1-8b", tp=2, context=8192, gpu_memory_utilization=0.9, batch=64,
        kv_dtype="fp8", prefix_caching=True, engine="vllm", inference=True)),
    "sglang_launch.sh": ("sglang", dict(preset="qwen3-8b", tp=1, context=4096, gpu_memory_utilization=0.85,
        batch=32, prefix_caching=False, engine="sglang")),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_example_file_is_read_into_its_knobs(name):
    fmt, expected = EXPECTED[name]
    assert detect_format(str(EX / name), read_text(str(EX / name))) == fmt
    knobs = _knobs(name)
    assert {k: knobs.get(k) for k in expected} == expected


def test_every_example_file_is_tested():
    assert sorted(p.name for p in EX.iterdir()) == sorted(EXPECTED)


def test_ignored_fields_are_listed_never_dropped():
    settings = read_settings(str(EX / "deepspeed_zero3.json"))
    assert "gradient_clipping = 1.0" in settings.ignored
    assert "optimizer.params.lr = 2e-05" in settings.ignored
    out = _run("parallel", "--from", EX / "deepspeed_zero3.json", "--preset", "llama3-8b")
    assert "ignored (4 fields the calculator does not use)" in out.output
    assert "megatron-deepspeed, the closest the step-time table has" in out.output  # DeepSpeed's stack, said so


def test_a_file_and_the_same_flags_give_the_same_answer():
    """The torchtitan example is exactly these flags (the header names them)."""
    flags = ["--preset", "llama3.1-8b", "-T", "8192", "--tp", "2", "--sp", "--fsdp", "full", "--dp", "32",
             "--micro-batch", "1", "--global-batch", "512", "--tokens", str(3000 * 512 * 8192), "--precision",
             "bf16-mixed", "--grad-reduce", "fp32", "--recompute", "selective", "--selective", "op", "--stack",
             "torchtitan-compile", "--optimizer", "adamw", "--gpu", "h100", "--format", "json"]  # fmt: skip
    by_flags = _run("parallel", *flags)
    by_file = _run("parallel", "--from", EX / "torchtitan_llama3_8b.toml", "--gpu", "h100", "--format", "json")
    assert by_flags.exit_code == 0, by_flags.output
    assert by_file.stdout == by_flags.stdout  # the header goes to stderr under --format json


def test_an_explicit_flag_wins_over_the_file_and_is_said():
    out = _run("parallel", "--from", EX / "torchtitan_llama3_8b.toml", "--gpu", "h100", "-T", "4096")
    assert out.exit_code == 0, out.output
    assert "your flags win over the file: --seq-len (the file: 8192" in out.output
    assert "T = 4096" in out.output


def test_a_knob_the_command_does_not_take_is_listed_as_unused():
    out = _run("memory", "--from", EX / "nemo_llama3_8b_lora.yaml", "--gpu", "h100")
    unused = next(line for line in out.output.splitlines() if "read but not used by `sizing memory`" in line)
    assert "--gpus 8 (trainer.devices = 8, trainer.num_nodes = 1)" in unused
    assert "--tp 1 (trainer.strategy.tensor_model_parallel_size = 1)" in unused  # training tp is not memory's --tp
    assert out.exit_code == 0, out.output


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("bad.toml", '[training]\nseq_len = "long"\n', "training.seq_len"),
        ("bad.toml", "[activation_checkpoint]\nmode = 'sometimes'\n", "activation_checkpoint.mode"),
        (
            "ds.json",
            '{"train_batch_size": 10, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 1}',
            "train_batch_size (10) is not micro (4) x accumulation (1)",
        ),
        ("ax.yml", "base_model: Qwen/Qwen3-8B\nadapter: qlora\nsequence_len: 2048\n", "qlora needs load_in_4bit"),
        ("ax.yml", "base_model: Qwen/Qwen3-8B\nadapter: lora\nlora_target_modules: [q_proj, w_pack]\n", "w_pack"),
        ("a.yml", "x: &a [1]\ny: *a\nmicro_batch_size: 1\n", "anchor or alias"),
        ("serve.sh", "vllm serve Qwen/Qwen3-8B --gpu-memory-utilization 1.5", "gpu_memory_utilization"),
        ("what.sh", "echo hello", "cannot tell its framework"),
        ("nemo.yaml", "trainer:\n  devices: 8\nmodel:\n  config:\n    _target_: x.Phi9Config1B\n", "no preset here"),
        ("mb.yaml", "model:\n  micro_batch_size: 1\ntrain:\n  micro_batch_size: 2\n", "contradicts"),
    ],
)
def test_bad_or_contradictory_fields_are_one_line_naming_the_field(tmp_path, name, text, message):
    path = tmp_path / name
    path.write_text(text)
    out = _run("parallel", "--from", path, "--preset", "llama3-8b")
    assert out.exit_code == 2, out.output
    assert message in out.output and "Traceback" not in out.output
    assert len(out.output.strip().splitlines()) == 1


def test_the_file_reader_refuses_what_is_not_a_regular_small_file(tmp_path):
    import os

    fifo = tmp_path / "pipe.toml"
    os.mkfifo(fifo)
    out = _run("parallel", "--from", fifo, "--preset", "llama3-8b")
    assert out.exit_code == 2 and "not a regular file" in out.output
    big = tmp_path / "big.yaml"
    big.write_text("a: 1\n" * 1_000_000)
    out = _run("parallel", "--from", big, "--preset", "llama3-8b")
    assert out.exit_code == 2 and "more than" in out.output


def test_from_format_names_a_format_and_needs_from():
    out = _run("parallel", "--preset", "llama3-8b", "--from-format", "torchtitan")
    assert out.exit_code == 2 and "give --from too" in out.output
    out = _run("parallel", "--from", EX / "bridge_llama3_8b.yaml", "--from-format", "nemo", "--preset", "llama3-8b")
    assert out.exit_code == 0, out.output  # read as NeMo: its names are not NeMo's, so they are listed as ignored
    assert "ignored" in out.output


def test_a_megatron_architecture_without_a_preset_is_sized_as_stated(tmp_path):
    path = tmp_path / "run.sh"
    path.write_text("python pretrain_gpt.py --num-layers 4 --hidden-size 512 --num-attention-heads 8 "
                    "--ffn-hidden-size 2048 --vocab-size 32000 --seq-length 1024 --swiglu --normalization RMSNorm "
                    "--position-embedding-type rope --disable-bias-linear --micro-batch-size 2 "
                    "--global-batch-size 16")  # fmt: skip
    out = _run("parallel", "--from", path, "--gpus", "8", "--tp", "1")
    assert out.exit_code == 0, out.output
    assert "(architecture)" in out.output and "T = 1024" in out.output


def test_estimate_takes_the_files_model_context_and_tokens():
    out = _run("estimate", "--from", EX / "megatron_llama3_70b.sh", "--gpu", "h100", "--format", "json")
    assert out.exit_code == 0, out.output
    import json

    data = json.loads(out.stdout)
    assert data["model"]["name"] == "llama3-70b"
    assert data["flops"]["seq_len"] == 8192
    assert data["training"]["tokens"] == 1000 * 256 * 8192


def test_the_browser_api_never_reads_or_writes_a_file_through_from_or_emit():
    from sizing.ui.api import ApiError, command_args, option_specs

    for key in ("from", "emit", "out"):
        with pytest.raises(ApiError, match="is not an option"):
            command_args("parallel", [(key, "/etc/hostname")])
    assert not {"from", "from-format", "emit", "out"} & {s["key"] for s in option_specs("parallel")}
