"""Hybrid state-space / linear-attention models (Mamba-2, Jamba, Nemotron-H, Bamba, Qwen3-Next):
per-layer mixers and MLPs, parameters, FLOPs, KV cache of the attention layers and the
recurrent state of the others. See docs/hybrid.md."""
