"""Stand-in checks for tests/test_verify_runner.py: module-level functions, so that a spawned
worker can import them, in a module that does not import torch, so that it starts in a moment."""

import os
import time

from reference_model.verify.check import CheckResult


def slow_check(name, cfg, pause=0.0, **options):
    time.sleep(pause)
    return CheckResult("slow", name, ["pid"], [[os.getpid()]], ok=True)


def failing_check(name, cfg, **options):
    raise ValueError(f"planted failure on {name}")
