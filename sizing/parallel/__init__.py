"""Parallel training: layouts (dp/ZeRO/FSDP x tp/SP x pp x cp x ep, offload, LoRA/QLoRA), per-GPU
memory of the most-loaded rank, communication per GPU per step, step time, and the search for
the smallest layout that fits. See docs/parallel.md."""
