"""ParallelLayout: every bad layout is one SizingError (Python) and one `Error:` line with exit 2 (CLI)."""

import pytest
from click.testing import CliRunner

from sizing.cli import main
from sizing.inputs.presets import get_preset
from sizing.parallel.layout import ParallelLayout
from sizing.validate import SizingError

LLAMA70 = get_preset("llama2-70b").config  # 64 heads, 8 kv heads, 80 layers
MIXTRAL = get_preset("mixtral-8x7b").config  # 8 experts, 32 layers


def test_world_and_derived_degrees():
    lay = ParallelLayout(dp=4, tp=8, pp=2, cp=2, ep=4, zero=1, micro_batches=4)
    # Megatron-Core's expert grid: a stage's tp x cp x dp = 64 ranks as etp x ep x edp = 1 x 4 x 16
    assert lay.world == 128 and lay.shard_degree == 8 and lay.expert_shard_degree() == 16
    assert ParallelLayout(dp=4, tp=8, pp=2, cp=2, ep=4, etp=8, zero=1, micro_batches=4).expert_shard_degree() == 2
    # ep across tp x dp (the refused layout): 32 = 2 x 16, one expert group of 32, edp 1
    assert ParallelLayout(dp=16, tp=2, ep=32, zero=1).expert_data_parallel == 1
    assert lay.global_batch() == 16
    hsdp = ParallelLayout(dp=16, fsdp="hybrid", shard_group=8)
    assert hsdp.shard_degree == 8 and hsdp.zero_stage == 3
    assert ParallelLayout(dp=16, fsdp="hybrid").shard_degree == 8  # default: one node
    assert ParallelLayout(dp=8).shard_degree == 1  # ZeRO 0 replicates
    ParallelLayout(tp=8).check_model(LLAMA70, 4096)
    ParallelLayout(dp=8, ep=8).check_model(MIXTRAL, 4096)


BAD_LAYOUTS = [
    (dict(tp=3), LLAMA70, 4096, "tp (3) must divide n_heads (64)"),
    (dict(tp=16), LLAMA70, 4096, "tp (16) must divide the kv heads (8)"),
    (dict(pp=81, micro_batches=81), LLAMA70, 4096, "pp (81) must be at most n_layers (80)"),
    (dict(pp=2, micro_batches=2, stage_layers=(40, 39)), LLAMA70, 4096, "stage_layers (40,39) must sum to n_layers"),
    (dict(ep=3, dp=3), MIXTRAL, 4096, "ep (3) must divide n_experts (8)"),
    (dict(ep=2, dp=2), LLAMA70, 4096, "ep (2) needs a mixture-of-experts model"),
    (dict(cp=3), LLAMA70, 4096, "cp (3) must divide seq_len (4096)"),
    (dict(tp=8, sequence_parallel=True), LLAMA70, 4100, "cp x tp (sequence parallel) (8) must divide seq_len"),
]


@pytest.mark.parametrize("fields,cfg,seq_len,message", BAD_LAYOUTS)
def test_layouts_that_do_not_divide_the_model(fields, cfg, seq_len, message):
    with pytest.raises(SizingError, match=message.replace("(", r"\(").replace(")", r"\)")):
        ParallelLayout(**fields).check_model(cfg, seq_len)


BAD_FIELDS = [
    (dict(dp=0), "dp (0) must be a positive integer"),
    (dict(tp=-2), "tp (-2) must be a positive integer"),
    (dict(pp=1.5), "pp (1.5) must be a positive integer"),
    (dict(cp=True), "cp (True) must be a positive integer"),
    (dict(micro_batches=0), "micro_batches (0) must be a positive integer"),
    (dict(zero=4), "zero (4) must be one of: 0, 1, 2, 3"),
    (dict(fsdp="half"), "fsdp ('half') must be one of: full, hybrid"),
    (dict(pp_schedule="gpipe"), "pp_schedule ('gpipe') must be one of"),
    (dict(finetune="prefix"), "finetune ('prefix') must be one of: full, lora, qlora"),
    (dict(sequence_parallel=True), "sequence_parallel (True) needs tp >= 2"),
    (dict(v=2), "v (2) must be 1 for pp_schedule 1f1b"),
    (dict(pp_schedule="interleaved", pp=4, v=1, micro_batches=4), "pp_schedule interleaved needs pp >= 2 and v >= 2"),
    (dict(pp=4, micro_batches=2), "micro_batches (2) must be at least pp (4)"),
    (dict(ep=4, dp=2), "ep x etp (4 x 1) must divide tp x cp x dp (1 x 1 x 2 = 2)"),
    (dict(ep=4, etp=2, dp=2, tp=2), "ep x etp (4 x 2) must divide tp x cp x dp (2 x 1 x 2 = 4)"),
    (dict(dp=8, shard_group=4), "shard_group applies to fsdp hybrid only"),
    (dict(dp=12, fsdp="hybrid", shard_group=8), "shard_group (8) must divide dp x cp (12)"),
    (dict(lora_targets=("q", "x")), "lora_targets ('x') must be one of"),
    (dict(lora_targets=()), "lora_targets (()) must be a non-empty tuple"),
    (dict(finetune="qlora", lora_base="int8"), "lora_base (int8) applies to finetune lora"),
    (dict(lora_trained=("embedding",)), "lora_trained applies to finetune lora or qlora"),
    (dict(finetune="lora", lora_trained=("vision",)), "lora_trained"),
]


@pytest.mark.parametrize("fields,message", BAD_FIELDS)
def test_bad_fields(fields, message):
    with pytest.raises(SizingError) as err:
        ParallelLayout(**fields)
    assert message in str(err.value)


def test_gpu_count_must_be_the_product():
    ParallelLayout(dp=2, tp=4, pp=2, micro_batches=2).check_world(16)
    with pytest.raises(SizingError, match=r"gpus \(12\) must equal dp x tp x pp x cp = 2 x 4 x 2 x 1 = 16"):
        ParallelLayout(dp=2, tp=4, pp=2, micro_batches=2).check_world(12)


CLI_BAD = [
    (["--tp", "3"], "tp (3) must divide n_heads (64)"),
    (["--tp", "16"], "tp (16) must divide the kv heads (8)"),
    (["--pp", "81"], "pp (81) must be at most n_layers (80)"),
    (["--tp", "8", "--pp", "2", "--gpus", "12"], "gpus (12) must equal dp x tp x pp x cp"),
    (["--tp", "0"], "--tp (0) must be a positive integer"),
    (["--dp", "-1"], "--dp (-1) must be a positive integer"),
    (["--pp", "2.5"], "--pp ('2.5') must be an integer"),
    (["--tp", "2", "--tp", "4"], "--tp given twice (2, 4)"),
    (["--ep", "2", "--dp", "2"], "ep (2) needs a mixture-of-experts model"),
    (["--dp", "2", "--sp"], "sequence_parallel (True) needs tp >= 2"),
    (["--sp"], "--sp sets a layout"),
    (["--tp", "8", "--cp", "2", "--attention-impl", "math"], "cp >= 2 needs attention_impl flash"),
    (["--tp", "8", "--overlap", "xx=1"], "--overlap dimension ('xx') must be one of"),
    (["--tp", "8", "--overlap", "tp=1.5"], "--overlap tp (1.5)"),
    (["--tp", "8", "--lora-targets", "q,nope", "--finetune", "lora"], "--lora-targets ('nope') must be one of"),
    (["--tp", "8", "--global-batch", "3", "--dp", "2"], "--global-batch (3) must be a multiple of dp x micro-batch"),
    (["--zero", "3"], "--zero sets a layout"),
]


@pytest.mark.parametrize("args,message", CLI_BAD)
def test_cli_bad_layout_is_one_line_exit_2(args, message):
    result = CliRunner().invoke(main, ["parallel", "--preset", "llama2-70b", "--gpu", "h100", *args])
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 2, result.output
    assert len(lines) == 1 and lines[0].startswith("Error:"), result.output
    assert message in lines[0]


def test_uneven_stages_are_accepted_with_first_and_last_lighter():
    """pp need not divide L: the middle stages take ceil(L/pp), the first and last the rest
    (80 = 26 + 27 + 27 on 3 stages), or the split given."""
    from sizing.parallel.memory import chunk_layers, stage_layers

    layout = ParallelLayout(pp=3, micro_batches=3)
    layout.check_model(LLAMA70, 4096)
    assert [len(chunk_layers(LLAMA70, layout, s, 0)) for s in range(3)] == [26, 27, 27]
    assert stage_layers(LLAMA70, layout) == 27
    given = ParallelLayout(pp=2, micro_batches=2, stage_layers=(30, 50), v=2, pp_schedule="interleaved")
    # model order: chunk 0 of stage 0 (15), of stage 1 (25), chunk 1 of stage 0 (15), of stage 1 (25)
    assert [chunk_layers(LLAMA70, given, s, c) for c in range(2) for s in range(2)] == [
        range(0, 15),
        range(15, 40),
        range(40, 55),
        range(55, 80),
    ]
