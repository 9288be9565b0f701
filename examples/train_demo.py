"""The seed's character GPT (the seed tutorial 000, "1.3 Transformer"), built by `build()`.

d_model 128, 4 heads, 4 layers, 256 learned positions, pre-LN, GELU 4x MLP with biases,
untied head without bias (~0.85M parameters with its ~80-character vocab); AdamW lr 3e-3,
batch 32 x 64 characters. The default text is this file's own source x 20, as in the seed.
The weights start at the seeds' init (`--init seed`, examples/seed_init.py), as the
exercise's numbers were made; `--init gpt2` keeps build()'s GPT-2 init, which also starts at
ln V but at this learning rate learns more slowly (measured at seed 0: ~3.1 nats after 50
steps and ~2.7 after 150, against ~2.5 after 50 from the seeds' init).

From the repository root:

    python -m examples.train_demo [--text PATH] [--steps N] [--seed S] [--init seed|gpt2]
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import torch

from reference_model.model.gpt import build
from sizing.inputs.config import ModelConfig

from .seed_init import INITS, apply_init


def demo_config(vocab_size: int) -> ModelConfig:
    return ModelConfig(
        vocab_size=vocab_size,
        d_model=128,
        n_layers=4,
        n_heads=4,
        d_ff=4 * 128,
        mlp="gelu",
        norm="layernorm",
        norm_placement="pre",
        position="learned",
        max_positions=256,
        qkv_bias=True,
        attn_out_bias=True,
        mlp_bias=True,
        lm_head_bias=False,
        tied_embeddings=False,
    )


def default_text() -> str:
    return Path(__file__).read_text(encoding="utf-8") * 20


def train(
    text: str | None = None,
    steps: int = 301,
    seed: int = 0,
    batch: int = 32,
    seq_len: int = 64,
    lr: float = 3e-3,
    log_every: int = 100,
    sample_tokens: int = 80,
    attn_impl: str = "flash",
    init: str = "seed",
    log=print,
) -> dict:
    """Train on `text`; returns {n_params, vocab, log: [(step, loss)], final_loss, sample}.
    `log` receives the printed lines (None: silent)."""
    torch.manual_seed(seed)
    text = default_text() if text is None else text
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
    if len(data) <= seq_len + 1:
        raise ValueError(f"text has {len(data)} characters; need more than {seq_len + 1}")
    cfg = demo_config(len(chars))
    model = apply_init(build(cfg, seed=seed, attn_impl=attn_impl), init, seed)
    n_params = model.num_params()
    say = log or (lambda *_: None)
    say(f"{n_params:,} parameters (vocab {len(chars)}, ln V = {math.log(len(chars)):.3f})")
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    history, start = [], time.perf_counter()
    model.train()
    for step in range(steps):
        ix = torch.randint(len(data) - seq_len - 1, (batch,))
        x = torch.stack([data[i : i + seq_len] for i in ix])
        y = torch.stack([data[i + 1 : i + seq_len + 1] for i in ix])  # shifted by one
        _, loss = model(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        history.append(loss.item())
        if log_every and (step % log_every == 0 or step == steps - 1):
            say(f"step {step:4d}  loss {loss.item():.3f}")
    seconds = time.perf_counter() - start
    model.eval()
    sample = ""
    if sample_tokens:
        out = model.generate(x[:1, :10], sample_tokens)
        sample = "".join(chars[i] for i in out[0].tolist())
        say("sample: " + repr(sample))
    say(f"{steps} steps in {seconds:.1f} s")
    return {
        "n_params": n_params,
        "vocab": len(chars),
        "losses": history,
        "first_loss": history[0],
        "final_loss": history[-1],
        "sample": sample,
        "seconds": seconds,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m examples.train_demo", description=__doc__.split("\n")[0])
    parser.add_argument("--text", type=Path, help="a text file (default: this file's source x 20)")
    parser.add_argument("--steps", type=int, default=301, help="optimizer steps (default 301, as the seed)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--init",
        choices=INITS,
        default="seed",
        help="seed: the seeds' Glorot init (default); gpt2: build()'s GPT-2 init",
    )
    args = parser.parse_args(argv)
    if args.steps <= 0:
        parser.error("--steps must be positive")
    text = args.text.read_text(encoding="utf-8") if args.text else None
    train(text, steps=args.steps, seed=args.seed, init=args.init)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
