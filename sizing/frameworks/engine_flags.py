"""The engines' own flag lists (sizing/data/engine_flags.json, written by tools/engine_flags.py
from vLLM's and SGLang's released source; trtllm-serve's documented options), to check that every
flag this tool reads or writes is one the engine's parser takes."""

from __future__ import annotations

import json
import os
from functools import cache

_PATH = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "engine_flags.json")


@cache
def _data() -> dict:
    with open(_PATH, encoding="utf-8") as handle:
        return json.load(handle)


def engine_flags(engine: str) -> frozenset[str]:
    return frozenset(_data()[engine]["flags"])


def engine_version(engine: str) -> str:
    return _data()[engine]["version"]


ENGINE_FLAGS = ("vllm", "sglang", "trtllm")


def unknown_engine_flags(engine: str, words: list[str]) -> list[str]:
    """The --flags of a command line that the engine's parser does not take."""
    known = engine_flags(engine)
    return [w.split("=")[0] for w in words if w.startswith("--") and w.split("=")[0] not in known]
