"""The "would fit" advice of sizing memory offers pure bf16 and 8-bit Adam (options that exist),
and `sizing memory` adds the parallel layout, offload, LoRA and QLoRA that fit on the same GPUs."""

from click.testing import CliRunner

from sizing.cli import main
from sizing.memory import training_memory


def test_lighter_model_states_are_offered():
    mem = training_memory("llama2-70b", 4096, zero=3, dp=8, recompute="full", gpu="h100")
    assert not mem.fits
    would = list(mem.would_fit)
    assert any(w.startswith("pure bf16 (--precision bf16") and "ZeRO 3, dp 8, recompute full" in w for w in would)
    assert any(w.startswith("8-bit Adam (--optimizer adam8bit) and ZeRO-3 over at least") for w in would)
    assert any(w.startswith("pure bf16 and 8-bit Adam") for w in would)
    assert would[-1].startswith("a GPU with at least")  # the bigger GPUs stay last
    # each offered setting really fits: pure bf16 at ZeRO-3 over 8 with full recomputation
    assert training_memory("llama2-70b", 4096, precision="bf16", zero=3, dp=8, recompute="full", gpu="h100").fits


def test_sizing_memory_adds_parallel_lora_qlora_and_offload():
    args = ["memory", "--preset", "llama2-70b", "--gpu", "h100", "--zero", "3", "--dp", "8", "--recompute", "full"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 3
    hints = [line for line in result.output.splitlines() if "(sizing parallel)" in line]
    assert [h.split(":")[1].strip().split(" on ")[0] for h in hints] == [
        "optimizer states offloaded to CPU",
        "LoRA (r 16, all linears)",
        "QLoRA (NF4 base, r 16, all linears)",
    ]
