"""`pip install .` (not editable) must carry every subpackage: an explicit package list once
shipped `sizing` without `sizing.cli`, and the README's first command failed on a fresh machine."""

from pathlib import Path

import pytest
from setuptools import find_packages

tomllib = pytest.importorskip("tomllib")  # Python >= 3.11; the check needs to run on one version only

ROOT = Path(__file__).resolve().parents[1]


def _packages_on_disk(top: str) -> set[str]:
    return {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / top).rglob("__init__.py")}


def test_the_wheel_carries_every_subpackage():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]
    shipped = set(find_packages(where=str(ROOT), include=config["include"]))
    on_disk = _packages_on_disk("sizing") | _packages_on_disk("reference_model") | _packages_on_disk("hf_meta")
    assert {"sizing.cli", "sizing.memory", "sizing.render", "sizing.report"} <= on_disk
    assert shipped == on_disk
