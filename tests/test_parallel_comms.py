"""sizing.parallel.comms / traffic / step: collective bytes per GPU per step, their time, the step."""

from dataclasses import replace

import pytest

from sizing.formulas import params as P
from sizing.inputs.hardware import get_gpu
from sizing.inputs.presets import get_preset
from sizing.parallel.comms import (
    all_gather_wire_bytes,
    all_reduce_wire_bytes,
    all_to_all_wire_bytes,
    ring_all_reduce_seconds,
)
from sizing.parallel.layout import ParallelLayout
from sizing.parallel.memory import Workload
from sizing.parallel.plan import parallel_plan
from sizing.parallel.step import bubble_fraction, exposed_seconds, overlaps
from sizing.parallel.traffic import step_collectives, tp_backward_all_reduces
from sizing.validate import SizingError

LLAMA7 = get_preset("llama2-7b").config
H100 = get_gpu("h100")


def test_ring_formulas():
    assert all_reduce_wire_bytes(800, 8) == 1400  # 2 (n - 1)/n S
    assert all_gather_wire_bytes(800, 8) == 700 and all_to_all_wire_bytes(800, 4) == 600
    assert all_reduce_wire_bytes(800, 1) == 0
    # 1 GB all-reduced over 8 GPUs on 450 GB/s NVLink: 1.75 GB / 450 GB/s
    assert ring_all_reduce_seconds(10**9, 8, 450) == pytest.approx(1.75 / 450)


def _by(collectives, dim, kind):
    return [c for c in collectives if c.dimension == dim and c.kind == kind]


def test_ddp_all_reduces_every_gradient_once():
    cs = step_collectives(LLAMA7, ParallelLayout(dp=8, micro_batches=4), Workload(4096), H100)
    (ar,) = _by(cs, "dp", "all_reduce")
    assert ar.count == 1 and ar.bytes_per_call == 2 * P.total_params(LLAMA7)
    assert ar.link == "nvlink" and ar.gbs == H100.nvlink_gbs


def test_zero1_is_reduce_scatter_plus_all_gather():
    cs = step_collectives(LLAMA7, ParallelLayout(dp=16, zero=1), Workload(4096), H100)
    (rs,), (ag,) = _by(cs, "dp", "reduce_scatter"), _by(cs, "dp", "all_gather")
    n = P.total_params(LLAMA7)
    assert rs.bytes_per_call == ag.bytes_per_call == 2 * (-(-n // 16) * 16)
    assert rs.link == "network"  # 16 ranks span two 8-GPU nodes


def test_tensor_parallel_all_reduces_per_layer():
    """Megatron: 2 all-reduces forward and 2 backward per layer of b.T.d.a bytes, per micro-batch.
    Sequence parallel turns each into an all-gather + a reduce-scatter, the same wire bytes
    (Korthikanti et al. 2022), plus Megatron's 2 backward re-gathers of the inputs it saved sharded."""
    lay = ParallelLayout(tp=8, micro_batches=3, vocab_parallel=False)
    (ar,) = _by(step_collectives(LLAMA7, lay, Workload(4096), H100), "tp", "all_reduce")
    assert ar.count == 4 * 32 * 3 and ar.bytes_per_call == 4096 * 4096 * 2
    sp_lay = replace(lay, sequence_parallel=True)
    for fused, gathers in ((True, 6), (False, 4)):
        sp = step_collectives(LLAMA7, sp_lay, Workload(4096), H100, fused=fused)
        ag, gather_lm_head = _by(sp, "tp", "all_gather")
        (rs,) = _by(sp, "tp", "reduce_scatter")
        assert (ag.count, rs.count) == (gathers * 32 * 3, 4 * 32 * 3) and gather_lm_head.count == 2 * 3
        assert ag.wire_bytes_per_step + rs.wire_bytes_per_step == ar.wire_bytes_per_step * (gathers + 4) // 8
    assert tp_backward_all_reduces(LLAMA7, fused=False) == 5  # q, k, v, up, gate as separate linears
    full = step_collectives(LLAMA7, lay, Workload(4096, recompute="full"), H100)
    assert _by(full, "tp", "all_reduce")[0].count == 6 * 32 * 3  # the re-run forward all-reduces again


def test_pipeline_cp_and_ep_traffic():
    lay = ParallelLayout(pp=4, micro_batches=8)
    (send,) = _by(step_collectives(LLAMA7, lay, Workload(4096), H100), "pp", "send")
    assert send.count == 16 and send.bytes_per_call == 4096 * 4096 * 2
    cp = ParallelLayout(cp=4)
    (ring,) = _by(step_collectives(LLAMA7, cp, Workload(8192), H100), "cp", "send")
    assert ring.count == 3 * 3 * 32 and ring.bytes_per_call == 2 * 2048 * 4096 * 2  # K and V of T/cp tokens
    mixtral = get_preset("mixtral-8x7b").config
    (a2a,) = _by(step_collectives(mixtral, ParallelLayout(dp=8, ep=8), Workload(4096), H100), "ep", "all_to_all")
    assert a2a.count == 4 * 32 and a2a.bytes_per_call == 4096 * 2 * 4096 * 2


def test_bandwidth_overrides_and_overlap():
    lay = ParallelLayout(tp=8)
    slow = parallel_plan(LLAMA7, lay, Workload(4096), gpu="h100", nvlink_gbs=45)
    fast = parallel_plan(LLAMA7, lay, Workload(4096), gpu="h100")
    assert slow.step.comm_seconds["tp"] == pytest.approx(10 * fast.step.comm_seconds["tp"])
    hidden = parallel_plan(LLAMA7, lay, Workload(4096), gpu="h100", overlap={"tp": 1.0})
    assert hidden.step.exposed_seconds["tp"] == 0 and fast.step.exposed_seconds["tp"] > 0
    assert exposed_seconds(3.0, 1.0, 2.0) == 1.0  # never more hidden than there is compute
    with pytest.raises(SizingError, match="overlap dimension"):
        overlaps({"xx": 0.5})


def test_step_time_is_compute_plus_exposed_plus_bubble():
    lay = ParallelLayout(dp=2, tp=8, pp=4, sequence_parallel=True, micro_batches=16)
    plan = parallel_plan(LLAMA7, lay, Workload(4096, tokens=10**12), gpu="h100", compute_efficiency=0.5)
    st = plan.step
    assert bubble_fraction(lay) == pytest.approx(3 / 19)
    assert st.bubble_seconds == pytest.approx(st.compute_seconds * 3 / 16)
    assert st.step_seconds == pytest.approx(st.compute_seconds + sum(st.exposed_seconds.values()) + st.bubble_seconds)
    assert st.predicted_mfu < 0.5
    steps = 10**12 / (32 * 4096)
    assert plan.gpu_hours == pytest.approx(steps * st.step_seconds * 64 / 3600)
