# SGLang serving Qwen3-8B on one GPU, radix cache off (an example for sizing --from)
python -m sglang.launch_server --model-path Qwen/Qwen3-8B \
  --tp-size 1 --context-length 4096 --mem-fraction-static 0.85 \
  --max-running-requests 32 --disable-radix-cache
