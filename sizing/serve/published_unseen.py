"""Published serving measurements kept out of the calibration (calibration.py fits only
published.py's rows): the check that the default efficiencies predict rows they were not fitted
to. Each must stay on the right side of the roofline bound, and most land within a factor 1.5 of
the default prediction (tests/test_serve_published_unseen.py; the table on reports/serving.md).

* TensorRT-LLM's performance page (the same page as published.py; its low-latency tables are
  data of v0.5): first-token latency of LLaMA 70B (Llama-2-70B, GQA) at batch 1 on tp 4, H100
  FP8 and A100 FP16.
* TensorRT-LLM's H200 launch blog (v0.5.0, "preliminary measured performance"): H200 FP8
  static-batch throughput, output tokens/s per GPU, of llama_13b and llama_70b (Llama-2). The
  H200 has no calibrated pair, so these check the stated assumptions 0.6 and 0.8.
"""

from __future__ import annotations

from sizing.serve.published import TRTLLM_V061, PublishedServing

H200_LAUNCH = (
    "NVIDIA TensorRT-LLM docs/source/blogs/H200launch.md (TensorRT-LLM v0.5.0, H200 FP8 max throughput), "
    "github.com/NVIDIA/TensorRT-LLM/blob/main/docs/source/blogs/H200launch.md"
)
_TPS, _TTFT = "output tokens/s per GPU", "first-token latency ms"

UNSEEN_SERVING: tuple[PublishedServing, ...] = (
    PublishedServing("llama2-70b", "h100-sxm", "fp8", 1, 4, 128, 2, 26, _TTFT, TRTLLM_V061),
    PublishedServing("llama2-70b", "h100-sxm", "fp8", 1, 4, 2048, 2, 109, _TTFT, TRTLLM_V061),
    PublishedServing("llama2-70b", "a100-80gb", "fp16", 1, 4, 128, 2, 47, _TTFT, TRTLLM_V061),
    PublishedServing("llama2-70b", "a100-80gb", "fp16", 1, 4, 2048, 2, 377, _TTFT, TRTLLM_V061),
    PublishedServing("llama2-13b", "h200", "fp8", 1024, 1, 128, 128, 11_819, _TPS, H200_LAUNCH),
    PublishedServing("llama2-13b", "h200", "fp8", 128, 1, 128, 2048, 4_750, _TPS, H200_LAUNCH),
    PublishedServing("llama2-13b", "h200", "fp8", 64, 1, 2048, 128, 1_349, _TPS, H200_LAUNCH),
    PublishedServing("llama2-70b", "h200", "fp8", 512, 1, 128, 128, 3_014, _TPS, H200_LAUNCH),
    PublishedServing("llama2-70b", "h200", "fp8", 512, 2, 128, 2048, 1_654, _TPS, H200_LAUNCH),
    PublishedServing("llama2-70b", "h200", "fp8", 64, 1, 2048, 128, 341, _TPS, H200_LAUNCH),
    PublishedServing("llama2-70b", "h200", "fp8", 32, 1, 2048, 128, 303, _TPS, H200_LAUNCH),
)
