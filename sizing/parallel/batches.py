"""The global batch a question assumes when it states none: one rule, used by every training
question (`sizing estimate --gpus`, `sizing parallel`, `sizing memory`'s hints, `sizing plan`,
the Python API and the UI), and named in every answer.

The batch decides which data-parallel degrees divide it and how many micro-batches a step runs,
so it decides the layout and the step; a fine-tuning hint priced at the pretraining batch would
quote the wrong step."""

from sizing.vocabulary import ceil_div

# Tokens per optimizer step when none is given: 4M (4,194,304), Llama 2's batch (Touvron et al.
# 2023, "Llama 2", section 2.2 and Table 1: 4M tokens, 1,024 sequences of 4,096); in sequences of
# the run's T, so 1,024 at T = 4,096 and 512 at T = 8,192.
DEFAULT_BATCH_TOKENS = 4 * 2**20
# Sequences per step for a fine-tuning hint (LoRA, QLoRA): the QLoRA paper's batch of 16
# (Dettmers et al. 2023, "QLoRA", appendix B: batch size 16 for the Guanaco runs).
FINETUNE_GLOBAL_BATCH = 16


def default_global_batch(seq_len: int) -> int:
    """Sequences per step when none is given: DEFAULT_BATCH_TOKENS in sequences of seq_len (at least one)."""
    return max(1, DEFAULT_BATCH_TOKENS // seq_len)


def batches_to_try(seq_len: int, gpus: int | None, given: int | None) -> tuple[int, ...]:
    """The global batches a search on `gpus` GPUs tries, in order: the one given; else the
    default, then (when no layout of that many GPUs divides it) the default rounded up to a
    multiple of the GPUs: one sequence or more per GPU."""
    if given is not None:
        return (given,)
    sequences = default_global_batch(seq_len)
    if gpus is None:
        return (sequences,)
    rounded = ceil_div(sequences, gpus) * gpus
    return (sequences,) if rounded == sequences else (sequences, rounded)
