"""Regenerate tests/fixtures/hf_counts_vision.json: the whole vision-language models of
sizing.vision.presets as transformers builds them (AutoModelForImageTextToText.from_config on the
meta device): `total`, and `vision` (every parameter outside the language model: the tower and
the projector). A developer tool, never imported by the project; run it in a scratch venv:

    python -m venv --system-site-packages /tmp/hfenv && /tmp/hfenv/bin/pip install transformers
    /tmp/hfenv/bin/python tools/hf_counts_vision.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch
import transformers
from transformers import AutoConfig, AutoModelForImageTextToText

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from sizing.vision.presets import VISION_PRESETS  # noqa: E402

OUT = ROOT / "tests" / "fixtures" / "hf_counts_vision.json"


def count(config: dict) -> dict:
    config = json.loads(json.dumps(config))
    model_type = config.pop("model_type")
    cfg = AutoConfig.for_model(model_type, **config)
    with torch.device("meta"):
        model = AutoModelForImageTextToText.from_config(cfg)
    total = sum(p.numel() for p in model.parameters())
    text = sum(
        p.numel() for n, p in model.named_parameters() if ".language_model." in f".{n}" or n.startswith("lm_head")
    )
    return {"class": type(model).__name__, "total": total, "vision": total - text}


def main() -> None:
    counts = {p.name: dict(count(p.hf_config), hf_config=p.hf_config) for p in VISION_PRESETS}
    out = {
        "_source": (
            f"Counted with transformers {transformers.__version__} (torch {torch.__version__}) by "
            "tools/hf_counts_vision.py; see the script's docstring."
        ),
        "transformers": transformers.__version__,
        "counts": counts,
    }
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    for name, c in counts.items():
        print(f"{name:20s} {c['class']:40s} {c['total']:>16,} {c['vision']:>14,}", file=sys.stderr)


if __name__ == "__main__":
    main()
