"""Fuzz `sizing parallel` the way tests/test_cli_fuzz.py fuzzes the other light commands: any
arguments end within 5 s in a result (0 fits, 3 does not) or one `Error:` line (exit 2)."""

from hypothesis import given

from tests.test_cli_fuzz import FUZZ, HOSTILE_NUMBERS, _args, _check

SMALL = ["1", "2", "3", "4", "8", "16", "0", "-1", "1e300", "x", "1.5", "\nError: forged"]
PARALLEL_OPTIONS = {
    "--gpus": SMALL + HOSTILE_NUMBERS[:6],
    "--dp": SMALL,
    "--tp": SMALL,
    "--pp": SMALL,
    "--cp": SMALL,
    "--ep": SMALL,
    "--v": SMALL,
    "--micro-batches": SMALL,
    "--micro-batch": SMALL,
    "--global-batch": SMALL,
    "--zero": ["0", "1", "3", "4", "x"],
    "--fsdp": ["full", "hybrid", "x"],
    "--shard-group": SMALL,
    "--schedule": ["1f1b", "interleaved", "x"],
    "--finetune": ["full", "lora", "qlora", "x"],
    "--lora-rank": SMALL,
    "--lora-targets": ["q,v", "q,,v", ",", "x", "q,q"],
    "--seq-len": ["4096", "1024", "4100", "0", "x", "1e999999"],
    "--recompute": ["none", "full", "x"],
    "--mfu": HOSTILE_NUMBERS[:10],
    "--overlap": ["dp=0.5", "tp=1", "x=1", "tp", "tp=nan", "tp=2"],
    "--nvlink-gbs": HOSTILE_NUMBERS[:10],
    "--tokens": ["1T", "0", "x"],
    "--max-gpus": SMALL,
    "--gpu": ["h100", "a100", "x"],
    "--format": ["json", "csv", "markdown", "table", "x"],
}


@FUZZ
@given(_args("parallel", PARALLEL_OPTIONS, ("--sp", "--offload-optimizer", "--offload-params", "--no-vocab-parallel")))
def test_parallel_arguments(args):
    _check(args)
