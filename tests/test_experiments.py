"""The seeds' experiments: the character GPT learns (seed 000) and pre-LN passes a larger
gradient back to the embedding than post-LN (seed 001), with fixed seeds."""

import math

import pytest

torch = pytest.importorskip("torch")

from reference_model import ln_experiment, train_demo  # noqa: E402
from sizing.params import total_params  # noqa: E402


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_train_demo_loss_falls_well_below_ln_v(capsys):
    result = train_demo.train(steps=50, seed=0, log_every=25, sample_tokens=20)
    ln_v = math.log(result["vocab"])
    assert 0.8e6 < result["n_params"] < 0.9e6  # the seed's ~0.84M
    assert result["n_params"] == total_params(train_demo.demo_config(result["vocab"]))
    assert result["first_loss"] > ln_v - 0.5
    assert sum(result["losses"][-5:]) / 5 < ln_v - 1.5  # ~2.5 nats after 50 steps vs ln V ~4.3
    out = capsys.readouterr().out
    assert "parameters" in out and "step    0" in out and "step   25" in out and "sample:" in out
    assert len(result["sample"]) == 10 + 20


def test_train_demo_command_on_a_given_text(tmp_path, capsys):
    text = tmp_path / "t.txt"
    text.write_text("abcabcabd " * 40)
    assert train_demo.main(["--text", str(text), "--steps", "3", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "(vocab 5," in out and "step    2" in out


def test_ln_experiment_pre_ln_passes_more_gradient_to_the_embedding():
    r = ln_experiment.run(seed=0)
    assert r["shape"] == (2, 16, 384) and r["n_layers"] == 6 and r["n_heads"] == 6
    assert r["readout"]["pre"] > r["readout"]["post"]  # the pinned direction (measured ~2.7x at seed 0)
    assert r["ratio"] == r["readout"]["ratio"] > 1.5
    assert r["mse"]["ratio"] > r["ratio"]  # an MSE readout adds the pre-LN stack's larger output
    assert r["sum"]["post"] < 1e-3 * r["sum"]["pre"]  # LayerNorm outputs sum to 0: no gradient at all


def test_ln_experiment_command(capsys):
    assert ln_experiment.main(["--layers", "2", "--d-model", "48", "--heads", "4"]) == 0
    out = capsys.readouterr().out
    assert "pre-LN" in out and "post-LN" in out and "ratio pre/post" in out
