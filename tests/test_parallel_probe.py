"""sizing.parallel against torch's FSDP2 and DTensor tensor parallelism on the fake process group."""

import json

import pytest
from click.testing import CliRunner

pytest.importorskip("torch")

from reference_model.probes.parallel import PROBE_LAYOUTS
from reference_model.probes.pipeline import PIPELINE_PROBES
from sizing.cli import main


def test_probe_layouts_cover_what_the_issue_asks():
    layouts = [p.layout for p in PROBE_LAYOUTS]
    assert len(layouts) >= 6
    assert {p.preset for p in PROBE_LAYOUTS} >= {"llama2-70b", "gpt2", "mixtral-8x7b"}  # GQA, tied LayerNorm, MoE
    assert any(lay.fsdp == "full" and lay.tp > 1 for lay in layouts) and any(lay.fsdp == "hybrid" for lay in layouts)
    assert any(lay.dp in (3, 5) for lay in layouts)  # uneven shards: 64, 96, 224 rows over 3 or 5 ranks
    assert any(lay.sequence_parallel and lay.fsdp is None for lay in layouts)
    assert any(lay.sequence_parallel and lay.fsdp for lay in layouts)


def test_sizing_verify_parallel_matches_torch_exactly():
    result = CliRunner().invoke(main, ["verify", "--parallel", "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["ok"] is True
    rows = data["results"][0]["rows"]
    assert all(row["difference"] == 0 for row in rows)
    by_layout = {}
    for row in rows:
        by_layout.setdefault(row["layout"], {})[row["quantity"]] = row["torch"]
    assert len(by_layout) == len(PROBE_LAYOUTS) + len(PIPELINE_PROBES)
    fsdp3 = by_layout["FSDP 3 (uneven) (llama2-70b toy, world 3)"]
    # rank 0's FSDP2 shards of the toy llama2-70b: every tensor's dim 0 chunked over 3 ranks
    assert fsdp3["weights bytes (rank 0 shards)"] == 166_840 and fsdp3["all_gather calls"] == 5
    assert fsdp3["reduce_scatter calls"] == 3
    tp2 = by_layout["TP 2 (llama2-70b toy, world 2)"]
    assert tp2["all_reduce calls"] == 14  # 2 layers x (2 forward + 5 backward: q, k, v, up, gate unfused)
    assert tp2["activation bytes per layer (largest block)"] == 123_392
    sp = by_layout["TP 2 + SP (llama2-70b toy, world 2)"]
    # per layer 2 all-gathers and 2 reduce-scatters forward, as many backward; + the lm_head's gather and
    # the embedding gradient's (no re-gather: torch saves the gathered inputs, named in the formula)
    assert sp["all_gather calls"] == 2 * 4 + 2 and sp["reduce_scatter calls"] == 2 * 4
    pp = by_layout["PP 4, 1F1B, m 8 (llama2-70b toy, world 4)"]
    for stage, held in enumerate((4, 3, 2, 1)):  # 1F1B: stage s holds p - s micro-batches at its peak
        assert f"stage {stage} activations bytes ({held} micro-batches in flight)" in pp
    sharded = [q for name, q in by_layout.items() if not name.startswith("PP ")]
    for quantities in sharded:  # every sharded layout checks states and at least one collective
        assert {"weights bytes (rank 0 shards)", "gradient bytes", "AdamW exp_avg + exp_avg_sq bytes"} <= set(
            quantities
        )
        assert any(q.endswith("calls") for q in quantities)
