"""Request mixes and trace files (sizing/serve/requests.py, `sizing serve --rate --trace`): the
documented CSV/JSONL format, one line per bad row, merging, shares and binning."""

from __future__ import annotations

import json

import pytest

from sizing.serve.requests import MAX_CLASSES, fixed_mix, mix_from_rows, read_trace
from sizing.validate import SizingError


def test_csv_histogram_merges_equal_pairs_and_normalises(tmp_path):
    path = tmp_path / "hist.csv"
    path.write_text("# a histogram\nprompt_tokens,output_tokens,weight\n512,128,3\n1024,256,1\n512,128,1\n")
    mix = read_trace(path)
    assert [(c.prompt, c.output, c.share) for c in mix.classes] == [(512, 128, 0.8), (1024, 256, 0.2)]
    assert mix.mean_prompt == pytest.approx(0.8 * 512 + 0.2 * 1024)  # 614.4
    assert mix.mean_decode_steps == pytest.approx(0.8 * 127 + 0.2 * 255)  # 152.6
    # the decode context, each class weighted by its decode iterations: Σ w (O-1)(P + O/2) / Σ w (O-1)
    expected = (0.8 * 127 * (512 + 64) + 0.2 * 255 * (1024 + 128)) / (0.8 * 127 + 0.2 * 255)
    assert mix.mean_decode_context == int(expected)


def test_jsonl_rows_without_weight_count_one_each(tmp_path):
    path = tmp_path / "trace.jsonl"
    rows = [{"prompt_tokens": 100, "output_tokens": 20}] * 3 + [{"prompt_tokens": 400, "output_tokens": 80}]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    mix = read_trace(path)
    assert [(c.prompt, c.output, c.share) for c in mix.classes] == [(100, 20, 0.75), (400, 80, 0.25)]


def test_every_bad_row_is_named_on_its_own_line():
    with pytest.raises(SizingError) as info:
        read_trace("tests/fixtures/traces/bad.csv")
    lines = str(info.value).splitlines()
    assert lines == [
        "bad.csv line 4: prompt_tokens (0) must be a positive integer (at most 1,099,511,627,776)",
        "bad.csv line 5: output_tokens (1) must be an integer >= 2 (at most 1,099,511,627,776)",
        "bad.csv line 6: weight (-2.0) must be a finite number >= 0 (at most 1e15)",
        "bad.csv line 7: 2 values for 3 columns (prompt_tokens, output_tokens, weight)",
    ]


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("t.txt", "x", "must be a .csv or .jsonl file"),
        ("t.csv", "prompt,output\n1,2\n", "line 1: header ('prompt,output'): missing prompt_tokens, output_tokens"),
        ("t.jsonl", '{"prompt_tokens": 5, "output_tokens": 3, "arrival": 1}\n', "line 1: unknown field 'arrival'"),
        ("t.jsonl", "[1, 2]\n", "line 1: not a JSON object ([1, 2])"),
        ("t.csv", "prompt_tokens,output_tokens\n", "has no rows"),
        ("t.csv", "prompt_tokens,output_tokens,weight\n5,3,0\n", "the weights sum to 0"),
    ],
)
def test_bad_files(tmp_path, name, text, message):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(SizingError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        read_trace(path)


def test_a_wide_trace_is_binned_keeping_its_means():
    rows = [(p, o, 1.0) for p in range(100, 2100, 100) for o in range(10, 210, 10)]  # 400 pairs
    mix = mix_from_rows(rows, "wide")
    assert len(mix.classes) <= MAX_CLASSES == 36
    assert sum(c.share for c in mix.classes) == pytest.approx(1)
    assert mix.mean_prompt == pytest.approx(1050, rel=1e-3)  # rounding of each bin's mean only
    assert mix.mean_output == pytest.approx(105, rel=1e-2)


def test_fixed_mix_checks_its_lengths():
    assert fixed_mix(512, 128).describe() == "512 in / 128 out"
    with pytest.raises(SizingError, match=r"output \(1\) must be an integer >= 2"):
        fixed_mix(512, 1)
