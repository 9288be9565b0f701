"""One answer to "how many GPUs": `sizing memory` and `sizing parallel` quote the same search
(sizing.parallel.min_gpus), and fine-tuning hints use a fine-tuning batch."""

import json
import re

import pytest
from click.testing import CliRunner

from sizing.cli import main
from sizing.inputs import Workload
from sizing.inputs.presets import get_preset
from sizing.parallel.batches import FINETUNE_GLOBAL_BATCH, default_global_batch
from sizing.parallel.min_gpus import min_gpus_that_fit
from sizing.parallel.search import would_fit


def _json(*args):
    out = CliRunner().invoke(main, [*args, "--format", "json"])
    assert out.exit_code in (0, 3), out.output
    return json.loads(out.output)


# (preset, GPU) pairs whose training does not fit one GPU: each is the question "how many?"
QUESTIONS = [("llama2-70b", "a100-80gb"), ("llama2-70b", "h100"), ("llama2-13b", "a100-40gb"), ("llama2-7b", "rtx4090")]


@pytest.mark.parametrize(("preset", "gpu"), QUESTIONS)
def test_memory_and_parallel_give_the_same_gpu_count(preset, gpu):
    mem = _json("memory", "--preset", preset, "--gpu", gpu)
    assert mem["fits"] is False
    first = mem["would_fit"][0]
    n_memory = int(re.match(r"the fewest GPUs: (\d+) ", first).group(1))
    par = _json("parallel", "--preset", preset, "--gpu", gpu)
    assert par["fits"] is True and par["layout"]["world"] == n_memory
    assert not any(w.startswith("ZeRO-3 over at least") for w in mem["would_fit"])  # no second answer


def test_llama2_70b_on_a100_is_16_not_15():
    # Model states 16 B/param x 68,976,648,192 = 1,027.83 GiB: ZeRO-3 alone over 15 A100-80GB
    # leaves 68.5 GiB per rank of states, which sizing.memory counted as fitting, but the
    # layout search runs over powers of two dividing the batch of 1,024, so 16 is the answer.
    cfg = get_preset("llama2-70b").config
    plan = min_gpus_that_fit(cfg, Workload(4096, recompute=None), gpu="a100-80gb")
    assert plan.layout.world == 16 and default_global_batch(4096) == 1024


def test_finetune_hints_use_the_finetune_batch():
    cfg = get_preset("llama2-70b").config
    asked = Workload(4096, recompute=None, global_batch=default_global_batch(4096), gpus=8)
    hints = dict(would_fit(cfg, asked, more_gpus=False, gpu="h100"))
    for what in ("LoRA (r 16, all linears)", "QLoRA (NF4 base, r 16, all linears)"):
        layout = hints[what].layout
        # the QLoRA paper's batch of 16 sequences, not the pretraining 1,024
        assert layout.dp * layout.micro_batches * layout.micro_batch == FINETUNE_GLOBAL_BATCH == 16
    pretraining = hints["optimizer states offloaded to CPU"].layout
    assert pretraining.dp * pretraining.micro_batches * pretraining.micro_batch == 1024
    par = _json("parallel", "--preset", "llama2-70b", "--gpu", "h100", "--gpus", "8")
    more = [a for a in par["would_fit"] if a["what"].endswith(" GPUs")]
    assert [a["what"] for a in more] == ["16 GPUs"]  # what `sizing memory --preset llama2-70b --gpu h100` quotes
