"""`sizing ui`'s API and server without a browser: each endpoint's result equals the CLI's
`--format json` for the same arguments, bad input is a 400 with the CLI's line, integers beyond
2^53 travel as strings, the plugged formulas evaluate to the formulas' values, and no request
reaches a file outside the package's static list."""

from __future__ import annotations

import hashlib
import http.client
import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from test_formula_strings import evaluate, symbols

from sizing.cli import main
from sizing.inputs.config import ModelConfig
from sizing.inputs.hardware import GPUS
from sizing.ui.api import MAX_SAFE_INTEGER, ApiError, answer, command_args, fits_by_gpu, js_safe, option_specs
from sizing.ui.server import make_server

ROOT = Path(__file__).resolve().parents[1]
HF_CONFIG = ROOT / "tests" / "fixtures" / "hf_configs" / "Qwen__Qwen2-0.5B.json"

# one request per endpoint, with the non-default options a user would type
REQUESTS = {
    "estimate": [("preset", "llama2-7b"), ("tokens", "2T"), ("gpu", "h100"), ("price", "2.5")],
    "memory": [("preset", "llama2-7b"), ("zero", "3"), ("dp", "8"), ("micro-batch", "2")],
    "parallel": [("preset", "llama2-7b"), ("gpus", "8"), ("tp", "2")],
    "serve": [("preset", "llama2-70b"), ("tp", "4"), ("batch", "8"), ("prompt", "2048"), ("output", "256")],
    "plan": [("flops", "1e22"), ("gpus", "64")],
    "compare": [("preset", "llama2-7b"), ("preset", "mistral-7b"), ("seq-len", "4096"), ("tokens", "2T")],
    "hybrid": [("preset", "jamba-v0.1"), ("context", "262144"), ("gpu", "h200")],
    "vision": [("preset", "qwen2.5-vl-7b"), ("images", "2"), ("image-size", "1080x1920")],
    "speculate": [("preset", "llama2-70b"), ("draft", "llama2-7b"), ("k", "4"), ("acceptance", "0.7")],
    "serve-layout": [("preset", "llama3-70b"), ("gpu", "h100"), ("weights", "bf16"), ("gpus", "8"), ("gpus", "16")],
    "sweep": [("preset", "llama2-7b"), ("set", "n_layers=24,32"), ("tokens", "1T,2T")],
}


def cli_json(args: list[str]) -> tuple[int, object]:
    result = CliRunner().invoke(main, args + ["--format", "json"])
    return result.exit_code, json.loads(result.stdout)


def cli_error(args: list[str]) -> str:
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    (line,) = [x for x in result.output.splitlines() if x.startswith("Error: ")]
    return line.removeprefix("Error: ")


@pytest.mark.parametrize("endpoint", sorted(REQUESTS))
def test_each_endpoint_equals_the_cli_json(endpoint):
    pairs = REQUESTS[endpoint]
    args = command_args(endpoint, pairs)
    code, expected = cli_json(args)
    got = answer(endpoint, pairs)
    assert got["result"] == js_safe(expected)
    assert got["exit_code"] == code
    assert got["command"] == "sizing " + " ".join(args) + " --format json"


def test_integers_beyond_2_53_travel_as_strings_and_smaller_ones_as_numbers():
    got = answer("estimate", REQUESTS["estimate"])["result"]
    # llama2-7b, 2T tokens: 46,084,915,200 training FLOPs per token x 2e12 = 9.21699e22 > 2^53
    assert got["training"]["flops"] == str(46_084_915_200 * 2_000_000_000_000)
    assert got["params"]["total"] == 6_738_415_616  # < 2^53: a JSON number
    assert js_safe(MAX_SAFE_INTEGER) == MAX_SAFE_INTEGER
    assert js_safe(MAX_SAFE_INTEGER + 1) == "9007199254740992"
    assert js_safe(-(MAX_SAFE_INTEGER + 1)) == "-9007199254740992"
    assert js_safe({"a": [True, 2**60, 1.5]}) == {"a": [True, str(2**60), 1.5]}


@pytest.mark.parametrize(
    ("endpoint", "pairs"),
    [
        ("memory", [("preset", "llama2-70b"), ("inference", "1"), ("batch", "4")]),
        ("parallel", [("preset", "llama2-70b"), ("gpus", "1"), ("tp", "1")]),
    ],
)
def test_does_not_fit_is_a_result_not_an_error(endpoint, pairs):
    got = answer(endpoint, pairs)
    code, expected = cli_json(command_args(endpoint, pairs))
    assert got["exit_code"] == code == 3  # the CLI's "does not fit" exit code
    assert got["verdict"] is False and got["result"]["fits"] is False
    assert got["result"] == js_safe(expected)


@pytest.mark.parametrize(
    ("endpoint", "pairs", "args"),
    [
        ("memory", [("preset", "nope")], ["memory", "--preset", "nope"]),
        ("estimate", [("preset", "gpt2"), ("seq-len", "-3")], ["estimate", "--preset", "gpt2", "--seq-len", "-3"]),
        ("serve", [("preset", "gpt2"), ("prompt", "10")], ["serve", "--preset", "gpt2", "--prompt", "10"]),
        ("plan", [("flops", "nan")], ["plan", "--flops", "nan"]),
    ],
)
def test_bad_input_is_the_cli_message(endpoint, pairs, args):
    with pytest.raises(ApiError) as caught:
        answer(endpoint, pairs)
    assert str(caught.value) == cli_error(args)


@pytest.mark.parametrize("key", ["format", "config", "help", "no-such-option"])
def test_options_the_web_may_not_set_are_refused(key):
    with pytest.raises(ApiError, match=f"^{key} is not an option of `sizing estimate`"):
        command_args("estimate", [("preset", "gpt2"), (key, "x")])


def test_switches():
    assert command_args("memory", [("inference", "1")]) == ["memory", "--inference"]
    assert command_args("memory", [("inference", "0")]) == ["memory"]
    assert command_args("estimate", [("memory", "0")]) == ["estimate", "--no-memory"]
    with pytest.raises(ApiError, match=r"^inference \('maybe'\) is a switch"):
        command_args("memory", [("inference", "maybe")])


def test_a_pasted_config_equals_the_cli_on_the_same_file(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(HF_CONFIG.read_text())
    _, expected = cli_json(["estimate", "--config", str(path)])
    got = answer("estimate", [("config_text", HF_CONFIG.read_text())])
    assert got["result"] == js_safe(json.loads(json.dumps(expected).replace(str(path), "config.json")))
    assert got["result"]["params"]["total"] == 494_032_768  # Qwen2-0.5B, tests/fixtures/hf_counts.json
    assert got["command"] == "sizing estimate --config config.json --format json"


@pytest.mark.parametrize("preset", ["llama2-7b", "mistral-7b", "deepseek-v3", "mixtral-8x7b", "gpt2"])
def test_plugged_formulas_equal_the_formulas(preset):
    """Each plugged text (numbers only) evaluates to what its formula gives with the symbols of
    tests/test_formula_strings.py, and the plugged symbols are the config's."""
    got = answer("estimate", [("preset", preset)])
    cfg = ModelConfig(**got["result"]["model"]["config"])
    env = symbols(cfg, got["result"]["flops"]["seq_len"])
    for part in ("params", "flops"):
        for key, row in got["formulas"][part].items():
            assert evaluate(row["plugged"], {}) == evaluate(row["formula"], env), (part, key)


def test_fits_by_gpu_asks_each_gpu():
    rows = fits_by_gpu("memory", [("preset", "llama2-7b"), ("gpu", "v100")])
    assert [r["gpu"] for r in rows] == list(GPUS)
    by_gpu = {r["gpu"]: r["fits"] for r in rows}
    for gpu in ("a100-80gb", "h200"):
        assert by_gpu[gpu] == answer("memory", [("preset", "llama2-7b"), ("gpu", gpu)])["result"]["fits"]
    # 135,889,321,988 B of training state and activations (see test_memory): more than 80 GiB, less than 141 GB
    assert (by_gpu["a100-80gb"], by_gpu["h200"]) == (False, True)


def test_option_specs_come_from_the_command():
    specs = {s["key"]: s for s in option_specs("memory")}
    assert specs["zero"]["choices"] == [0, 1, 2, 3] and specs["zero"]["default"] == 0
    assert specs["inference"]["flag"] is True and specs["inference"]["default"] is False
    assert "preset" not in specs and "format" not in specs and "config" not in specs


def test_the_vendored_chart_library_matches_its_readme():
    vendor = ROOT / "sizing" / "ui" / "static" / "vendor"
    digest = hashlib.sha256((vendor / "chart.umd.min.js").read_bytes()).hexdigest()
    assert f"`chart.umd.min.js` sha256 `{digest}`" in (vendor / "README.md").read_text()
    assert "MIT License" in (vendor / "chart.js-LICENSE.md").read_text()


# what the page shows is these files: its own static files (not vendor/) and the modules that
# lay an answer out (cards, words and units, the memory bar)
PAGE_FILES = ("cards.py", "fields.py", "fit.py")


def static_digest() -> str:
    """One hash of the page's own files: the screenshots (docs/img/ui.png and docs/img/ui/*.png,
    written by the browser tests with SIZING_UI_SCREENSHOT / SIZING_UI_SCREENSHOTS) are current
    while this is the hash recorded beside them."""
    digest = hashlib.sha256()
    package = ROOT / "sizing" / "ui"
    files = [p for p in (package / "static").glob("*") if p.is_file()] + [package / name for name in PAGE_FILES]
    for path in sorted(files):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def test_the_readme_screenshot_is_current():
    """Regenerate with (docs/ui.md): SIZING_UI_SCREENSHOT=docs/img/ui.png SIZING_UI_SCREENSHOTS=docs/img/ui
    python -m pytest -m 'browser' tests/test_ui_browser.py tests/test_ui_journeys.py -k 'screenshot or journey'"""
    for name in ("ui.png.sha256", "ui/journeys.sha256"):
        recorded = (ROOT / "docs" / "img" / name).read_text().strip()
        assert recorded == static_digest(), f"the page changed: regenerate docs/img/{name}'s pictures (docs/ui.md)"
    assert "docs/img/ui.png" in (ROOT / "README.md").read_text()


# ---- the server ----
@pytest.fixture(scope="module")
def server():
    srv = make_server("127.0.0.1", 0)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()
    thread.join(5)


def request(server, method, path, body=None, host=None):
    conn = http.client.HTTPConnection(*server.server_address[:2], timeout=60)
    headers = {"Host": host} if host else {}
    if method == "POST":
        headers["Content-Type"] = "application/json"
    conn.request(method, path, body=body, headers=headers)
    response = conn.getresponse()
    data = response.read()
    conn.close()
    return response.status, response.getheader("Content-Type"), data


def test_the_server_serves_the_page_and_its_files(server):
    status, kind, data = request(server, "GET", "/")
    assert (status, kind) == (200, "text/html; charset=utf-8") and b"/static/app.js" in data
    status, kind, data = request(server, "GET", "/static/vendor/chart.umd.min.js")
    assert status == 200 and data.startswith(b"/*!\n * Chart.js v4.6.1")


@pytest.mark.parametrize(
    "path",
    [
        "/static/../../pyproject.toml",
        "/static/%2e%2e/%2e%2e/pyproject.toml",
        "/static/..%2f..%2fpyproject.toml",
        "/static//etc/passwd",
        "/static/../api.py",
        "/static/vendor/../../server.py",
        "/../../../../etc/passwd",
        "/sizing/ui/api.py",
        "/static/",
    ],
)
def test_no_path_reaches_a_file_outside_the_static_list(server, path):
    status, kind, data = request(server, "GET", path)
    assert status == 404 and kind == "application/json", (path, data)


def test_the_api_over_http(server):
    status, _, data = request(server, "GET", "/api/estimate?preset=llama2-7b&tokens=2T&gpu=h100&price=2.5")
    assert status == 200
    assert json.loads(data)["result"] == answer("estimate", REQUESTS["estimate"])["result"]
    body = json.dumps({"pairs": [["config_text", HF_CONFIG.read_text()]]})
    status, _, data = request(server, "POST", "/api/estimate", body=body)
    assert status == 200 and json.loads(data)["result"]["params"]["total"] == 494_032_768
    status, _, data = request(server, "GET", "/api/memory?preset=nope")
    assert (status, json.loads(data)) == (400, {"error": cli_error(["memory", "--preset", "nope"])})
    status, _, data = request(server, "POST", "/api/fits/memory", body=json.dumps({"pairs": [["preset", "gpt2"]]}))
    assert status == 200 and {r["gpu"] for r in json.loads(data)} == set(GPUS)
    status, _, data = request(server, "POST", "/api/estimate", body=b"[1, 2]")
    assert status == 400 and "pairs" in json.loads(data)["error"]


def test_a_foreign_host_name_is_refused(server):
    """DNS rebinding: a page on another site resolving its name to 127.0.0.1 gets nothing."""
    status, _, _ = request(server, "GET", "/api/lists", host="evil.example")
    assert status == 403


def test_the_server_binds_this_machine_only_by_default():
    srv = make_server()
    try:
        assert srv.server_address[0] == "127.0.0.1"
    finally:
        srv.server_close()


def test_sizing_help_does_not_import_the_ui():
    code = (
        "import sys\nfrom sizing.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "assert not [m for m in sys.modules if m.startswith('sizing.ui')], 'sizing.ui imported'\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert "ui" in out.stdout.split("Commands:")[1].split()


def test_a_bad_port_is_one_error_line():
    assert cli_error(["ui", "--port", "70000"]) == "--port (70000) must be an integer >= 0 (at most 65,535)"


def test_the_wheel_carries_every_static_file():
    """`pip install .` must ship the page: every file under sizing/ui/static matches a
    package-data pattern of pyproject.toml."""
    from fnmatch import fnmatch

    tomllib = pytest.importorskip("tomllib")
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["sizing.ui"]
    package = ROOT / "sizing" / "ui"
    files = [p.relative_to(package).as_posix() for p in (package / "static").rglob("*") if p.is_file()]
    assert "static/vendor/chart.umd.min.js" in files
    assert [f for f in files if not any(fnmatch(f, pattern) for pattern in patterns)] == []


def test_sizing_ui_serves_until_stopped():
    """The command itself: binds 127.0.0.1 on the port given (0: a free one), prints its URL,
    serves the page, and stops on SIGINT (Ctrl+C) with exit code 0."""
    import signal
    import urllib.request

    process = subprocess.Popen(
        [sys.executable, "-m", "sizing", "ui", "--port", "0"], cwd=ROOT, stderr=subprocess.PIPE, text=True
    )
    try:
        line = process.stderr.readline()
        assert line.startswith("sizing ui: http://127.0.0.1:"), line
        url = line.split()[2]
        with urllib.request.urlopen(url, timeout=30) as response:
            assert response.status == 200 and b"<title>sizing ui" in response.read()
    finally:
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 0


_TEXT = st.one_of(
    st.sampled_from(["1", "0", "-1", "nan", "inf", "1e400", "2T", "1.5", "", "h100", "llama2-7b", "x=1", "9" * 40]),
    st.text(max_size=12),
)


@settings(max_examples=60, deadline=None)
@given(
    endpoint=st.sampled_from(["estimate", "memory", "serve"]),
    extra=st.lists(
        st.tuples(st.sampled_from(["seq-len", "gpu", "batch", "tokens", "set", "prompt", "output", "mfu"]), _TEXT),
        max_size=3,
    ),
)
def test_any_value_is_an_answer_or_one_bad_input_line(endpoint, extra):
    """Whatever a request holds, the API answers or refuses with one line; never a traceback."""
    pairs = [("preset", "gpt2"), ("prompt", "64"), ("output", "8")] if endpoint == "serve" else [("preset", "gpt2")]
    try:
        got = answer(endpoint, pairs + extra)
    except ApiError as exc:
        assert str(exc) and "\n" not in str(exc) and "Traceback" not in str(exc)
    else:
        json.dumps(got, allow_nan=False)  # strict JSON
        assert got["exit_code"] in (0, 3)


@pytest.mark.parametrize("length", ["-1", "abc", str(2 << 20)])
def test_a_bad_content_length_is_refused(server, length):
    conn = http.client.HTTPConnection(*server.server_address[:2], timeout=30)
    conn.putrequest("POST", "/api/estimate")
    conn.putheader("Content-Type", "application/json")
    conn.putheader("Content-Length", length)
    conn.endheaders()
    response = conn.getresponse()
    assert response.status == 413 and "Content-Length" in json.loads(response.read())["error"]
    conn.close()


def test_another_threads_print_never_lands_in_an_answer(capsys):
    """sys.stdout is the process's: while the server runs a command, a print from any other
    thread goes to the real stream, not into the command's JSON."""
    stop = threading.Event()

    def noise():
        while not stop.is_set():
            print("noise", flush=True)

    thread = threading.Thread(target=noise)
    thread.start()
    try:
        for _ in range(5):
            assert answer("estimate", [("preset", "gpt2")])["result"]["params"]["total"] == 124_439_808
    finally:
        stop.set()
        thread.join(5)
    assert "noise" in capsys.readouterr().out


def test_a_port_in_use_is_one_error_line():
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        message = cli_error(["ui", "--port", str(port)])
    assert message.startswith(f"--host 127.0.0.1 --port {port}: cannot listen (")
