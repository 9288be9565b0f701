"""Property fuzz of `sizing ui`'s routes (issue 34): any method, path, query, body and headers a
client sends gets an HTTP answer with a JSON or static body, a status the API documents, strict
JSON, never a dropped connection, a traceback or a temporary path. The default run draws a few
dozen requests; the exhaustive variant is marked slow (CI runs it with -m slow)."""

from __future__ import annotations

import http.client
import json
import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sizing.ui.api import ENDPOINTS
from sizing.ui.server import make_server

STATUSES = {200, 400, 403, 404, 413, 415, 501, 503, 504}
KEYS = ["preset", "gpu", "seq-len", "tokens", "set", "gpus", "tp", "prompt", "output", "rate", "flops", "config_text"]
KEYS += ["format", "config", "x", "inference", "verdict-only", ""]
VALUES = ["gpt2", "llama2-7b", "jamba-v0.1", "h100", "", "0", "-1", "1e400", "nan", "2T", "128K", "٣", "n_layers=2"]
VALUES += ['{"model_type": "llama"}', "[" * 50, "a..b/c", "\nError: forged"]
PATHS = [f"/api/{e}" for e in ENDPOINTS] + [f"/api/fits/{e}" for e in ("estimate", "memory", "serve")]
PATHS += ["/api/lists", "/", "/static/app.js", "/static/../server.py", "/api", "/api/fits", "/api/x", "/%2e%2e/"]
HEADERS = st.fixed_dictionaries(
    {},
    optional={
        "Content-Type": st.sampled_from(["application/json", "text/plain", "application/json; charset=utf-8", ""]),
        "Origin": st.sampled_from(["http://evil.example", "null", ""]),
        "Sec-Fetch-Site": st.sampled_from(["cross-site", "same-origin", "none", "same-site"]),
    },
)
PAIRS = st.lists(st.tuples(st.sampled_from(KEYS), st.one_of(st.sampled_from(VALUES), st.text(max_size=8))), max_size=4)
BODIES = st.one_of(
    PAIRS.map(lambda pairs: json.dumps({"pairs": [list(p) for p in pairs]})),
    st.sampled_from(["", "[]", "{}", '{"pairs": 5}', '{"pairs": [[1, [2]]]}', "[" * 5000 + "]" * 5000, "\x00"]),
    st.binary(max_size=40).map(lambda b: b.decode("latin-1")),
)


@pytest.fixture(scope="module")
def server():
    srv = make_server("127.0.0.1", 0, budget_s=20, idle_timeout_s=5)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()
    thread.join(5)


def check(server, method: str, path: str, pairs, body: str, headers: dict) -> None:
    from urllib.parse import quote

    query = "&".join(f"{quote(k)}={quote(v)}" for k, v in pairs)
    conn = http.client.HTTPConnection(*server.server_address[:2], timeout=60)
    conn.request(
        method, path + ("?" + query if query else ""), body=body.encode("utf-8", "surrogatepass"), headers=headers
    )
    response = conn.getresponse()
    data = response.read()
    conn.close()
    assert response.status in STATUSES, (method, path, pairs, response.status, data[:200])
    kind = response.getheader("Content-Type", "")
    if kind == "application/json":
        payload = json.loads(data, parse_constant=lambda name: pytest.fail(f"non-finite JSON {name}"))
        text = json.dumps(payload)
        assert "Traceback" not in text and "sizing-ui-" not in text, text[:300]
        if response.status != 200:
            assert set(payload) == {"error"} and "\n" not in payload["error"], payload
    else:
        assert response.status == 200 and path in ("/", "/static/app.js"), (path, kind)


FUZZ = settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))


@FUZZ
@given(st.sampled_from(["GET", "POST"]), st.sampled_from(PATHS), PAIRS, BODIES, HEADERS)
def test_any_request_gets_a_documented_answer(server, method, path, pairs, body, headers):
    check(server, method, path, pairs, body if method == "POST" else "", headers)


@pytest.mark.slow
@settings(FUZZ, max_examples=400)
@given(method=st.sampled_from(["GET", "POST"]), path=st.sampled_from(PATHS), pairs=PAIRS, body=BODIES, headers=HEADERS)
def test_any_request_gets_a_documented_answer_exhaustive(server, request, method, path, pairs, body, headers):
    if "slow" not in (request.config.getoption("markexpr") or ""):
        pytest.skip("exhaustive: run with -m slow")
    check(server, method, path, pairs, body if method == "POST" else "", headers)
