"""The options only one command takes (verify's checks, report, ui, profile, plan's law), declared
in the same table as the shared ones (sizing/cli/spec_table.py), so the form, the help and the
tests treat them alike."""

from __future__ import annotations

from sizing.cli.spec_table import _choice, _count
from sizing.cli.specs import declare, describe
from sizing.vocabulary import FLOP_COUNTERS

# ---------------------------------------------------------------- sizing verify: one flag per check
# The checks `sizing verify` runs, in order (name, help); with no flag every one runs. To add one:
# a line here and a function of the same name in reference_model.verify.registry.CHECKS.
VERIFY_CHECKS: tuple[tuple[str, str], ...] = (
    ("params", "Parameters by component: formula vs numel() of the model built on the meta device."),
    (
        "flops",
        "Matmul FLOPs by component, forward and forward+backward: full size on meta (FlopCounterMode) "
        "and toy size on CPU (FlopCounterMode and fvcore, plus a checkpointed re-run).",
    ),
    (
        "memory",
        "Memory on a toy-size copy (same switches): saved activations (math, sdpa, full recompute), "
        "KV cache of generate(), weights/grads/AdamW state vs sizing.memory.",
    ),
)
for _name, _help in VERIFY_CHECKS:
    declare(f"check_{_name}", (f"--{_name}",), "command", _help, is_flag=True, default=False)
declare(
    "check_parallel",
    ("--parallel",),
    "command",
    "FSDP2 and DTensor tensor parallelism on torch's fake process group (one process, CPU): per-rank "
    "parameter, gradient, AdamW and activation bytes and every collective of a step vs sizing.parallel, on "
    "the probe's own toy layouts (no model needed).",
    is_flag=True,
)
declare(
    "check_hybrid",
    ("--hybrid",),
    "command",
    "Hybrid mixers (Mamba-2, gated DeltaNet) and vision towers of the `sizing hybrid` / `sizing vision` "
    "presets vs their plain-PyTorch builds: params, FLOPs, state bytes, chunked scan = recurrence (no model "
    "needed; --all includes it).",
    is_flag=True,
)
declare(
    "counter",
    ("--counter",),
    "command",
    "FLOP check: which counter(s) to run (fvcore runs only at toy size, on CPU).",
    _choice("--counter", FLOP_COUNTERS),
    default="both",
)

# ---------------------------------------------------------------- sizing memory, sizing plan
declare("inference", ("--inference",), "command", "Inference memory (weights + KV cache) instead of training.",
        is_flag=True)  # fmt: skip
declare("law", ("--law",), "command", "The law whose N_opt the shapes are built around.",
        _choice("--law", ("epoch", "hoffmann-a3", "hoffmann-a1", "20-tokens")), default="epoch")  # fmt: skip

# ---------------------------------------------------------------- sizing report
declare("check", ("--check",), "command",
        "Regenerate into a temporary folder; exit 1 listing the stale files of --out.", is_flag=True)  # fmt: skip
declare("with_verification", ("--with-verification",), "command",
        "Also write verification.md from the PyTorch reference model (needs torch).", is_flag=True)  # fmt: skip
declare("force", ("--force",), "command",
        "Overwrite files in --out that have the report's names but were not written by it (links out of --out "
        "are refused even so).", is_flag=True)  # fmt: skip

# ---------------------------------------------------------------- sizing ui
declare("host", ("--host",), "command", "Address to bind (this machine only by default).", default="127.0.0.1")
declare("port", ("--port",), "command", "TCP port to listen on (0: any free port).",
        _count("--port", 0, 65535), default=8765)  # fmt: skip
declare("open", ("--open",), "command", "Open the page in the default browser.", is_flag=True, dest="open_browser")
declare("allow_remote", ("--allow-remote",), "command",
        "Allow a --host other than this machine's (127.0.0.1, ::1, localhost; '' and 0.0.0.0 are every interface). "
        "It exposes the page and its JSON API, without authentication, to every machine that can reach that "
        "address: anyone there can run any calculation (and keep this machine's CPU busy).", is_flag=True)  # fmt: skip

# ---------------------------------------------------------------- sizing profile
declare("steps", ("--steps",), "command", "Timed steps; the median is reported (default 10).", _count("--steps"))
declare("warmup", ("--warmup",), "command", "Untimed steps first (default 3).", _count("--warmup", 0))
declare("compile", ("--compile",), "command", "torch.compile the model (default no).", off_flag="--no-compile",
        dest="use_compile")  # fmt: skip
declare("device", ("--device",), "command", "cpu: a tiny timing run for testing, not a performance figure.",
        _choice("--device", "sizing.inputs:DEVICES"), default="cuda")  # fmt: skip
declare("planned", ("--planned",), "command",
        "One of the planned GPU runs (see --plan-report): its model and settings; explicit options override them.",
        _choice("--planned", "sizing.inputs:PLANNED_RUN_NAMES"))  # fmt: skip
declare("plan_report", ("--plan-report",), "command",
        "Write the GPU profile report page (planned runs, predictions, measured figures from --results) to PATH "
        "and exit; needs no torch.", metavar="PATH")  # fmt: skip
declare("results", ("--results",), "command", "With --plan-report: folder of <run>.json / <run>.md.", metavar="DIR")

# ---------------------------------------------------------------- the form's words (sizing/cli/spec_table.py)
# fmt: off
describe(
    {
        "inference": "Inference (weights + KV cache) instead of training", "law": "Scaling law for the shapes",
        "counter": "FLOP counter", "check": "Check only", "with_verification": "With the verification page",
        "force": "Overwrite", "host": "Host", "port": "Port", "open": "Open a browser", "steps": "Timed steps",
        "warmup": "Warm-up steps", "compile": "torch.compile", "device": "Device", "planned": "Planned run",
        "plan_report": "Plan report page", "results": "Results folder",
        "check_params": "Parameter check", "check_flops": "FLOP check", "check_memory": "Memory check",
        "check_parallel": "Parallel check", "check_hybrid": "Hybrid check",
    }
)
# fmt: on
