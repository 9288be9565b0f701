"""The global batches the layout searches assume when a question states none. The batch decides
which data-parallel degrees divide it and how many micro-batches a step runs, so a fine-tuning
hint priced at the pretraining batch would quote the wrong step."""

# Sequences per step when searching a pretraining layout: Llama 2 trained on 4M-token batches,
# 1,024 x 4,096 (Touvron et al. 2023, "Llama 2", section 2.2 and Table 1).
DEFAULT_GLOBAL_BATCH = 1024
# Sequences per step for a fine-tuning hint (LoRA, QLoRA): the QLoRA paper's batch of 16
# (Dettmers et al. 2023, "QLoRA", appendix B: batch size 16 for the Guanaco runs).
FINETUNE_GLOBAL_BATCH = 16
