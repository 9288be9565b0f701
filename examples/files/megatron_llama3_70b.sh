# Llama 3 70B pretraining with Megatron-LM on 8 nodes of 8 H100s (an example for sizing --from)
torchrun --nproc-per-node 8 --nnodes 8 pretrain_gpt.py \
  --num-layers 80 --hidden-size 8192 --ffn-hidden-size 28672 \
  --num-attention-heads 64 --group-query-attention --num-query-groups 8 \
  --swiglu --normalization RMSNorm --position-embedding-type rope \
  --untie-embeddings-and-output-weights --disable-bias-linear \
  --seq-length 8192 --max-position-embeddings 8192 \
  --tensor-model-parallel-size 8 --pipeline-model-parallel-size 4 --sequence-parallel \
  --micro-batch-size 1 --global-batch-size 256 --train-iters 1000 \
  --bf16 --use-distributed-optimizer --recompute-granularity selective \
  --lr 1.5e-4 --min-lr 1.5e-5 --lr-decay-style cosine \
  --data-path /data/my_corpus_text_document --tokenizer-type HuggingFaceTokenizer \
  --tokenizer-model meta-llama/Meta-Llama-3-70B
