# vLLM serving Llama 3.1 8B on two GPUs (an example for sizing --from)
vllm serve meta-llama/Llama-3.1-8B \
  --tensor-parallel-size 2 \
  --max-model-len 8192 \
  --gpu-memory-utilization 0.9 \
  --max-num-seqs 64 \
  --kv-cache-dtype fp8 \
  --enable-prefix-caching
