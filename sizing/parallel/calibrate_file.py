"""`sizing calibrate`: fit the step model's stack overheads to a user's measured steps, report the
error on those steps before and after (cross-validated), and write a calibration file that every
time answer takes with --calibration (sizing.parallel.overhead)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sizing.parallel.calibration import cross_validate, fit_stacks, summarise
from sizing.parallel.measured import measured_runs
from sizing.parallel.overhead import builtin_overheads, load_calibration, lookup, set_active
from sizing.validate import SizingError, show_arg


@dataclass(frozen=True)
class Calibration:
    path: str
    runs: int
    sources: int
    fitted: dict  # stack -> {"overhead", "runs", "before"}
    before: dict  # ErrorSummary.to_dict() with the built-in overheads
    after: dict  # with the fitted ones, in sample
    cross_validated: dict  # with the fitted ones, each unit (source, or row) left out of its own fit
    cv_unit: str

    def to_dict(self) -> dict:
        return {
            "description": "Stack overheads fitted by `sizing calibrate` (sizing/parallel/calibration.py) to measured "
            "steps; pass this file to any time answer with --calibration.",
            "measured_steps": self.path,
            "runs": self.runs,
            "stacks": self.fitted,
            "error_before": self.before,
            "error_after": self.after,
            "error_cross_validated": self.cross_validated,
            "cross_validation": self.cv_unit,
        }


def calibrate(path: str | Path) -> Calibration:
    """Fit; raise SizingError with one line per bad row (nothing is fitted then)."""
    runs, errors = measured_runs(path)
    if errors:
        raise SizingError("\n".join(errors))
    if not runs:
        raise SizingError(f"{path}: no measured steps in it")
    obs = [r.observation() for r in runs]
    fitted = fit_stacks(obs, min_sources=1, min_runs=1)  # the user's own runs of their own stack
    builtin = builtin_overheads()
    stacks = sorted({o.stack for o in obs})
    sources = {o.source for o in obs}
    unit, label = (lambda o: o.source), "leave-one-source-out"
    if len(sources) < 2:
        unit, label = (lambda o: o.name), "leave-one-row-out (one source)"
    cv = cross_validate(obs, unit, 1, 1) if len(obs) > 1 else {o.name: o.error(fitted[o.stack]) for o in obs}
    table = {
        s: {
            "overhead": fitted[s],
            "runs": sum(o.stack == s for o in obs),
            "before": lookup(builtin, s),
        }
        for s in stacks
    }
    return Calibration(
        str(path),
        len(obs),
        len(sources),
        table,
        summarise([o.error(lookup(builtin, o.stack)) for o in obs]).to_dict(),
        summarise([o.error(fitted[o.stack]) for o in obs]).to_dict(),
        summarise(list(cv.values())).to_dict(),
        label,
    )


def use_calibration(path: str | Path) -> dict[str, float]:
    """Make a calibration file's stack overheads the ones every prediction uses; SizingError if
    the file is not one."""
    try:
        values = load_calibration(path)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        detail = " ".join(str(exc).split())  # one line whatever the file held
        message = (
            f"--calibration ({show_arg(str(path))}): not a calibration file written by `sizing calibrate` ({detail})"
        )
        raise SizingError(message) from None
    set_active(values)
    return values
