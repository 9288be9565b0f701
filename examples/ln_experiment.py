"""Pre-LN vs post-LN gradient flow (the seed tutorial 001, "从零实现 Transformer 块").

Two 6-layer stacks that differ only in norm placement (pre: x + f(LN(x)); post:
LN(x + f(x))), built by `build()` with the same seed, so every weight is identical. The
seed's exercise: the same (2, 16, 384) input (6 heads) through each stack, one backward
pass, the gradient norm at the input embedding.

The answer depends on the init. The exercise's blocks start with O(1) gain (`--init seed`,
the default: the seeds' Glorot init, examples/seed_init.py), so each sublayer changes the
residual stream and the norms' placement shows. At GPT-2's init (`--init gpt2`, what `build()` gives: std 0.02,
residual projections 0.02 / sqrt(2L)) every block starts close to the identity and both
stacks pass about the same gradient.

The seed does not say which scalar is backpropagated, and the answer depends on it, so
every readout is reported:
  readout  <out, R> with one fixed random R: dL/dout = R for both stacks, so the ratio
           measures the backward pass alone (the headline number);
  mse      mean (out - R)^2: also scales with the size of the output, and a pre-LN stack
           without a final norm has a larger output;
  sum      sum(out): degenerate for post-LN, whose last op is a LayerNorm (gain 1, bias 0)
           whose outputs sum to 0 for any input, so its gradient is 0 up to rounding;
  lm       the whole GPT (token + position embedding, blocks, final norm, lm_head) on
           (2, 16) random tokens with the next-token loss; gradient at the embedded input.

From the repository root:

    python -m examples.ln_experiment [--seed S] [--layers 6] [--d-model 384] [--heads 6] [--init seed|gpt2]
"""

from __future__ import annotations

import argparse

import torch

from reference_model.model.gpt import build
from sizing.inputs.config import ModelConfig

from .seed_init import INITS, apply_init

READOUTS = ("readout", "mse", "sum", "lm")


def stack_config(
    placement: str,
    n_layers: int = 6,
    d_model: int = 384,
    n_heads: int = 6,
    vocab_size: int = 256,
    max_positions: int = 64,
) -> ModelConfig:
    """GPT-2 style (LayerNorm, GELU 4x MLP, learned positions, biases); only the norm
    placement varies. Both keep the final norm, so both models hold the same tensors."""
    return ModelConfig(
        vocab_size=vocab_size,
        d_model=d_model,
        n_layers=n_layers,
        n_heads=n_heads,
        d_ff=4 * d_model,
        mlp="gelu",
        norm="layernorm",
        norm_placement=placement,
        position="learned",
        max_positions=max_positions,
        qkv_bias=True,
        attn_out_bias=True,
        mlp_bias=True,
    )


def _stack_grad(model, x: torch.Tensor, readout: str, target: torch.Tensor) -> float:
    x = x.clone().requires_grad_(True)
    step = model.make_step(x.shape[1])
    h = x
    for block in model.blocks:  # the bare stack, as the seed's exercise
        h = block(h, step)
    if readout == "readout":
        loss = (h * target).sum()
    elif readout == "mse":
        loss = (h - target).pow(2).mean()
    else:
        loss = h.sum()
    loss.backward()
    return x.grad.norm().item()


def _lm_grad(model, idx: torch.Tensor) -> float:
    embedded = {}

    def keep(_module, _inputs, output):
        output.retain_grad()
        embedded["x"] = output

    handle = model.tok_emb.register_forward_hook(keep)
    try:
        _, loss = model(idx[:, :-1], idx[:, 1:])
        loss.backward()
    finally:
        handle.remove()
    return embedded["x"].grad.norm().item()


def run(
    seed: int = 0,
    batch: int = 2,
    seq_len: int = 16,
    n_layers: int = 6,
    d_model: int = 384,
    n_heads: int = 6,
    vocab_size: int = 256,
    init: str = "seed",
) -> dict:
    """{readout: {"pre": norm, "post": norm, "ratio": pre / post}} plus the shape; one
    seed sets the weights (identical in both stacks), the input and R. `init`: "seed" (the
    seeds' init, examples/seed_init.py) or "gpt2" (build()'s own)."""
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(batch, seq_len, d_model, generator=gen)
    target = torch.randn(batch, seq_len, d_model, generator=gen)
    idx = torch.randint(vocab_size, (batch, seq_len + 1), generator=gen)
    out: dict = {
        "seed": seed,
        "shape": (batch, seq_len, d_model),
        "n_layers": n_layers,
        "n_heads": n_heads,
        "init": init,
    }
    norms: dict = {r: {} for r in READOUTS}
    for placement in ("pre", "post"):
        cfg = stack_config(placement, n_layers, d_model, n_heads, vocab_size, max(64, seq_len))
        model = apply_init(build(cfg, seed=seed), init, seed)
        for readout in READOUTS[:3]:
            norms[readout][placement] = _stack_grad(model, x, readout, target)
        norms["lm"][placement] = _lm_grad(model, idx)
    for readout, pair in norms.items():
        out[readout] = dict(pair, ratio=pair["pre"] / pair["post"] if pair["post"] else float("inf"))
    out["ratio"] = out["readout"]["ratio"]
    return out


_LABELS = {
    "readout": "<out, R> (headline)",
    "mse": "mean (out - R)^2",
    "sum": "sum(out)",
    "lm": "full GPT, next-token loss",
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m examples.ln_experiment", description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--layers", type=int, default=6)
    parser.add_argument("--d-model", type=int, default=384)
    parser.add_argument("--heads", type=int, default=6)
    parser.add_argument(
        "--init",
        choices=INITS,
        default="seed",
        help="seed: the seeds' Glorot init (default); gpt2: build()'s GPT-2 init",
    )
    args = parser.parse_args(argv)
    r = run(seed=args.seed, n_layers=args.layers, d_model=args.d_model, n_heads=args.heads, init=args.init)
    print(
        f"{r['n_layers']}-layer pre-LN vs post-LN, input {r['shape']}, {r['n_heads']} heads, seed {r['seed']}, "
        f"{r['init']} init, same weights; |grad| at the input embedding after one backward pass"
    )
    print(f"{'backpropagated scalar':27s} {'pre-LN':>10s} {'post-LN':>10s} {'pre/post':>10s}")
    for readout in READOUTS:
        g = r[readout]
        print(f"{_LABELS[readout]:27s} {g['pre']:10.4g} {g['post']:10.4g} {g['ratio']:10.3g}")
    print(f"ratio pre/post (headline, <out, R>): {r['ratio']:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
