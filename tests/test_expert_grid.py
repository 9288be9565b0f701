"""Megatron-Core's expert layout: a pipeline stage's tp x cp x dp ranks decomposed again as
etp x ep x edp (megatron/core/parallel_state.py, initialize_model_parallel). Experts split over
ep, each expert's matrices over etp, their states sharded and their gradients reduced over edp."""

import json

from click.testing import CliRunner

from sizing.cli import main
from sizing.inputs import get_gpu, get_preset
from sizing.parallel import ParallelLayout, Workload, step_collectives
from sizing.parallel.memory import stage_tensors, trained_states_bytes
from sizing.parallel.ops import expert_share
from sizing.parallel.search import candidate_layouts

MIXTRAL = get_preset("mixtral-8x7b").config  # 8 experts of 3 x 4096 x 14336, top-2, 32 layers
EXPERT = 3 * 4096 * 14_336  # 176,160,768 parameters per expert and layer
QWEN3 = get_preset("qwen3-30b-a3b").config  # 128 experts


def _expert_states(layout: ParallelLayout) -> dict:
    tensors = [(t, c) for t, c in stage_tensors(MIXTRAL, layout, 0) if t.expert]
    return trained_states_bytes(tensors, layout, Workload(4096))


def test_ep_may_span_the_tensor_parallel_ranks():
    # issue 36: "ep (32) must divide dp x cp (16)" refused a layout Megatron runs; 32 = tp 2 x dp 16
    lay = ParallelLayout(dp=16, tp=2, ep=32, sequence_parallel=True, zero=1)
    lay.check_model(QWEN3, 4096)
    assert (lay.expert_grid, lay.expert_data_parallel) == (32, 1)


def test_expert_weights_split_over_ep_x_etp_and_states_over_edp():
    # tp 2 x dp 8 = 16 ranks: ep 8 x etp 1 (edp 2) holds one whole expert per rank; ep 4 x etp 2
    # (edp 2) two experts, each half: the same 176,160,768 weights per layer either way
    for ep, etp in ((8, 1), (4, 2)):
        lay = ParallelLayout(dp=8, tp=2, ep=ep, etp=etp, sequence_parallel=True, zero=1)
        states = _expert_states(lay)
        assert lay.expert_data_parallel == 2
        assert states["weights_bytes"] == 2 * 32 * EXPERT
        assert states["optimizer_bytes"] == 12 * 32 * EXPERT // 2  # fp32 master, m, v over edp 2
    # ep 2 on tp 2 x dp 8: edp 8 shards four experts' states (the tp ranks count in edp)
    lay = ParallelLayout(dp=8, tp=2, ep=2, sequence_parallel=True, zero=1)
    assert _expert_states(lay)["optimizer_bytes"] == 12 * 32 * 4 * EXPERT // 8


def test_all_to_all_over_ep_and_expert_gradients_over_edp():
    lay = ParallelLayout(dp=8, tp=2, ep=8, sequence_parallel=True, zero=1)
    colls = step_collectives(MIXTRAL, lay, Workload(4096), get_gpu("h100"))
    (a2a,) = [c for c in colls if c.dimension == "ep"]
    # each rank dispatches its own T / tp = 2048 tokens x top-2 x d 4096 x 2 B (etp 1)
    assert (a2a.group, a2a.bytes_per_call) == (8, 2048 * 2 * 4096 * 2)
    experts = [c for c in colls if c.dimension == "dp" and c.what.startswith("expert")]
    assert experts and all(c.group == lay.expert_data_parallel == 2 for c in experts)


def test_expert_gemms_at_their_per_rank_shape():
    # (local experts, tokens per local expert, width per rank, tokens dispatched) for t = 4096 tokens
    # of a tp group: each rank dispatches its own t / tp = 2048 (sequence parallelism); etp 1 puts
    # 8 ep ranks x 2048 x 2 / 8 = 4096 on each local expert, etp 2 the same on half the width (the
    # etp group all-gathers what its two ranks received: arXiv:2504.14960 sec. 3.3)
    assert expert_share(MIXTRAL, ParallelLayout(dp=8, tp=2, ep=8), 4096, 1.0) == (1, 4096, 14_336, 2048)
    assert expert_share(MIXTRAL, ParallelLayout(dp=8, tp=2, ep=4, etp=2), 4096, 1.0) == (2, 4096, 7168, 2048)


def test_search_takes_ep_from_the_whole_stage():
    layouts = candidate_layouts(MIXTRAL, 4096, 16, 1024, "flash", ParallelLayout())
    tp2 = [lay for lay in layouts if lay.tp == 2 and lay.pp == 1 and lay.cp == 1]
    assert tp2 and all(lay.ep == 8 and lay.etp == 1 for lay in tp2)  # 8 experts, 16 ranks


def test_cli_etp_and_the_rule():
    args = ["parallel", "--preset", "qwen3-30b-a3b", "--gpu", "h100", "-T", "4096", "--recompute", "full"]
    ok = CliRunner().invoke(main, args + ["--tp", "2", "--dp", "16", "--sp", "--ep", "32", "--format", "json"])
    assert ok.exit_code in (0, 3) and json.loads(ok.output)["layout"]["expert_data_parallel"] == 1
    etp = CliRunner().invoke(
        main, args + ["--tp", "2", "--dp", "16", "--sp", "--ep", "16", "--etp", "2", "--format", "json"]
    )
    assert json.loads(etp.output)["layout"]["etp"] == 2
    bad = CliRunner().invoke(main, args + ["--tp", "2", "--dp", "16", "--ep", "32", "--etp", "2"])
    assert bad.exit_code == 2 and "ep x etp (32 x 2) must divide tp x cp x dp (2 x 1 x 16 = 32)" in bad.output
