"""docs/config.md's table of the modern presets is what the code computes."""

import re
from pathlib import Path

from sizing.formulas.flops import flop_breakdown
from sizing.formulas.params import active_params, total_params
from sizing.inputs.presets import PRESETS
from sizing.memory.kv import kv_cache_bytes

TEXT = (Path(__file__).resolve().parents[1] / "docs" / "config.md").read_text()
ROW = re.compile(r"^\| `([\w.-]+)` \| ([\d,]+) \| ([\d,]+) \| [^|]+ \| [^|]+ \| ([\d,]+) \| ([\d,]+) \|$", re.MULTILINE)


def test_every_modern_preset_has_a_true_row():
    rows = {m.group(1): [int(g.replace(",", "")) for g in m.groups()[1:]] for m in ROW.finditer(TEXT)}
    assert set(rows) == {p.name for p in PRESETS.values() if p.published is not None}
    for name, (total, active, forward, kv) in rows.items():
        preset = PRESETS[name]
        cfg, T = preset.config, preset.context
        fb = flop_breakdown(cfg, T)
        assert (total, active) == (total_params(cfg), active_params(cfg))
        assert forward == fb.per_token(fb.forward)
        assert kv == kv_cache_bytes(cfg, T) // T
