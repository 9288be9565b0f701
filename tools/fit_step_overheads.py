"""Fit the step model's per-stack overheads to the published runs and write their
leave-one-source-out errors (sizing.parallel.fit_published):

python tools/fit_step_overheads.py          # rewrite step_time.json "stack_overhead" and step_time_cv.json
python tools/fit_step_overheads.py --check  # exit 1 if either is stale

Run it after changing a step-time term, a constant or a published row, then `sizing report`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from sizing.parallel.band import CV_FILE  # noqa: E402
from sizing.parallel.fit_published import (  # noqa: E402
    cv_rows,
    cv_summary,
    cv_summary_by_kind,
    fitted_overheads,
    observations,
)
from sizing.parallel.stepdata import DATA_FILE  # noqa: E402
from sizing.report.files import write_bytes_atomic  # noqa: E402

FIT_NOTE = (
    "One overhead per stack on its kernel time (sizing/parallel/overhead.py), fitted by sizing/parallel/calibration.py "
    "to the published runs of sizing/data/published_steps.json: the value minimising the sum of |log(predicted / "
    "measured)| over the stack's runs, each run weighted 1 / (runs of its source) so every source counts once. "
    "family:<f>: fitted over every run of the family's stacks (used by a stack with no runs); pooled: over all runs. "
    "Written by tools/fit_step_overheads.py; 'runs' and 'sources' say what each value was fitted on."
)


def _dump(data) -> str:
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


def fresh_files() -> dict[Path, str]:
    obs = observations()
    constants = json.loads(DATA_FILE.read_text(encoding="utf-8"))
    constants["stack_overhead"] = {"description": FIT_NOTE, "fitted": fitted_overheads(obs)}
    rows = cv_rows(obs)
    cv = {
        "description": (
            "Each published run's error (predicted / measured - 1) with the stack overheads fitted on every source "
            "(error), without its own source (cv_error: leave-one-source-out) and without its publication "
            "(cv_publication_error); summaries per source and per kind (dense, mixture of experts). "
            "Written by tools/fit_step_overheads.py; read by "
            "sizing/parallel/band.py for the bands of every time answer."
        ),
        "summary": cv_summary(rows),
        "summary_by_publication": cv_summary(rows, "cv_publication_error"),
        "summary_by_kind": cv_summary_by_kind(rows),
        "rows": rows,
    }
    return {DATA_FILE: _dump(constants), CV_FILE: _dump(cv)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the files are stale")
    args = parser.parse_args()
    stale = []
    for path, text in fresh_files().items():
        if path.exists() and path.read_text(encoding="utf-8") == text:
            continue
        if args.check:
            stale.append(path)
        else:
            write_bytes_atomic(path, text.encode("utf-8"))
            print(f"wrote {path.relative_to(ROOT)}")
    if stale:
        print(
            "stale: " + ", ".join(str(p.relative_to(ROOT)) for p in stale) + " (run python tools/fit_step_overheads.py)"
        )
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
