"""Issue 34 items 7, 8 and 11-15: `sizing ui` shared by a user's tabs and scripts. Many requests
at once are all answered, a slow one holds no lock, a request past its time budget or beyond the
calculation workers gets a clear 503/504, cross-site requests are refused, idle connections are
closed, and nothing leaks (a temporary path, a traceback). Kept small: CI runs it on 2 cores."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from click.testing import CliRunner

import sizing.ui.server as ui_server
from sizing.cli import main
from sizing.ui.server import is_loopback, make_server

SPIN_S = 3.0  # how long the stand-in slow calculation keeps the CPU busy unless released


@pytest.fixture
def slow(monkeypatch):
    """`/api/plan` becomes a CPU-bound calculation of SPIN_S (or until released): a slow request
    that competes for the interpreter as a real search would, on any machine."""
    release = threading.Event()
    real = ui_server.answer

    def answer(endpoint, pairs, extra=()):
        if endpoint != "plan":
            return real(endpoint, pairs, extra)
        end = time.monotonic() + SPIN_S
        while time.monotonic() < end and not release.is_set():
            sum(range(2000))
        return {"endpoint": "plan", "slow": True}

    monkeypatch.setattr(ui_server, "answer", answer)
    yield release
    release.set()


def serving(**options):
    server = make_server("127.0.0.1", 0, **options)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def stop(server):
    server.shutdown()
    server.server_close()


def call(server, method, path, body=None, headers=None, timeout=60):
    conn = http.client.HTTPConnection(*server.server_address[:2], timeout=timeout)
    conn.request(method, path, body=body, headers=headers or {})
    response = conn.getresponse()
    data = response.read()
    conn.close()
    return response.status, json.loads(data) if data else None


JSON = {"Content-Type": "application/json"}


@pytest.fixture
def server():
    srv = serving()
    yield srv
    stop(srv)


def test_item_12_two_hundred_concurrent_requests_are_all_answered(server):
    """Item 12: 200 concurrent /api/estimate gave 48 connection resets (a listen backlog of 5)."""
    with ThreadPoolExecutor(200) as pool:
        statuses = list(pool.map(lambda _: call(server, "GET", "/api/estimate?preset=gpt2")[0], range(200)))
    assert statuses == [200] * 200


def test_item_11_estimate_answers_within_a_second_while_a_slow_request_runs(server, slow):
    """Item 11: /api/plan?flops=1e27 made /api/estimate wait 94 s behind a global lock."""
    started = threading.Thread(target=call, args=(server, "GET", "/api/plan?flops=1e27"))
    started.start()
    time.sleep(0.3)  # the slow calculation is running
    begin = time.monotonic()
    status, payload = call(server, "GET", "/api/estimate?preset=gpt2")
    assert status == 200 and payload["result"]["params"]["total"] == 124_439_808
    assert time.monotonic() - begin < 1.0
    slow.set()
    started.join(10)


def test_item_11_a_request_past_its_budget_or_beyond_the_workers_is_a_clear_error(slow):
    """Item 11: a bounded pool and a per-request time budget: 504 past the budget (the slow
    calculation is not stopped), 503 when every calculation worker stays busy."""
    srv = serving(budget_s=0.5, compute_workers=1)
    try:
        status, payload = call(srv, "GET", "/api/plan?flops=1e27")
        assert status == 504 and "longer than 0.5 s" in payload["error"]
        status, payload = call(srv, "GET", "/api/estimate?preset=gpt2")  # the one worker is still busy
        assert status == 503 and "busy" in payload["error"]
        slow.set()
        time.sleep(0.2)
        assert call(srv, "GET", "/api/estimate?preset=gpt2")[0] == 200
    finally:
        stop(srv)


@pytest.mark.parametrize(
    "method, headers, status",
    [
        ("POST", {"Content-Type": "text/plain"}, 415),  # a form's or sendBeacon's simple request
        ("POST", {**JSON, "Origin": "http://evil.example"}, 403),
        ("POST", {**JSON, "Origin": "null"}, 403),
        ("GET", {"Sec-Fetch-Site": "cross-site"}, 403),
        ("GET", {"Sec-Fetch-Site": "same-site"}, 403),
        ("POST", {**JSON, "Sec-Fetch-Site": "same-origin"}, 200),
        ("GET", {"Sec-Fetch-Site": "none"}, 200),  # a URL typed in the address bar
    ],
)
def test_item_11_a_cross_site_request_is_refused(server, method, headers, status):
    """Item 11: a cross-site text/plain POST ran commands. Requests whose Origin or
    Sec-Fetch-Site is not this server are refused, and a POST must be JSON."""
    body = json.dumps({"pairs": [["preset", "gpt2"]]}) if method == "POST" else None
    assert call(server, method, "/api/estimate?preset=gpt2", body, headers)[0] == status


def test_item_11_the_page_own_origin_is_accepted(server):
    address, port = server.server_address[:2]
    host = f"{address}:{port}"
    headers = {**JSON, "Origin": f"http://{host}", "Sec-Fetch-Site": "same-origin"}
    assert call(server, "POST", "/api/estimate", json.dumps({"pairs": [["preset", "gpt2"]]}), headers)[0] == 200


def test_item_14_an_idle_connection_is_closed():
    """Item 14: without a socket timeout each idle connection held a thread for ever."""
    srv = serving(idle_timeout_s=0.5)
    try:
        with socket.create_connection(srv.server_address[:2], timeout=10) as idle:
            begin = time.monotonic()
            assert idle.recv(100) == b""  # closed by the server, not by our timeout
            assert time.monotonic() - begin < 5
        assert call(srv, "GET", "/api/estimate?preset=gpt2")[0] == 200
    finally:
        stop(srv)


def test_item_15_no_temporary_path_and_no_traceback(server, capfd):
    """Item 15: an error about a pasted config showed the server's temporary path; a client that
    disconnected early printed a 40-line BrokenPipe traceback on the server."""
    body = json.dumps({"pairs": [["config_text", '{"model_type": "llama", "hidden_size": 0}']]})
    status, payload = call(server, "POST", "/api/estimate", body, JSON)
    assert status == 400 and payload["error"].startswith("config file 'config.json': ")
    assert "sizing-ui-" not in payload["error"] and "/tmp" not in payload["error"]
    for _ in range(5):
        with socket.create_connection(server.server_address[:2]) as gone:
            gone.sendall(b"GET /api/fits/estimate?preset=gpt2 HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
    time.sleep(1.5)  # the answers are written to closed sockets meanwhile
    assert call(server, "GET", "/api/estimate?preset=gpt2")[0] == 200
    err = capfd.readouterr().err
    assert "Traceback" not in err and "BrokenPipe" not in err


def test_item_8_a_deeply_nested_body_is_a_400(server):
    """Item 8: a 100000-deep JSON body was a RecursionError; the connection dropped unanswered."""
    deep = "[" * 100_000 + "]" * 100_000
    for body in (deep, json.dumps({"pairs": [["preset", [[["x"]]]]]})):
        status, payload = call(server, "POST", "/api/estimate", body, JSON)
        assert status == 400 and "pairs" in payload["error"]


def test_item_7_serving_capacity_is_asked_from_the_page(server):
    """Item 7: /api/serve with rate (and /api/fits/serve) was HTTP 500 KeyError: 'memory'."""
    query = "preset=llama3-70b&prompt=1000&output=200&rate=10"
    status, payload = call(server, "GET", f"/api/serve?{query}")
    assert status == 200 and payload["verdict"] is True and payload["result"]["best"]["gpus"] >= 1
    # each GPU asked with --verdict-only: its capacity search stops at the first layout that serves the rate
    status, rows = call(server, "GET", f"/api/fits/serve?{query}")
    assert status == 200 and any(r["fits"] for r in rows)


@pytest.mark.parametrize("host", ["", "0.0.0.0", "::", "192.168.1.10", "example.com"])
def test_item_13_a_non_loopback_host_needs_allow_remote(host):
    """Item 13: `sizing ui --host ''` bound every interface."""
    result = CliRunner().invoke(main, ["ui", "--host", host, "--port", "0"])
    assert result.exit_code == 2 and "--allow-remote" in result.output and len(result.output.splitlines()) == 1
    assert not is_loopback(host)


def test_item_13_loopback_hosts_and_the_flags_help():
    assert all(is_loopback(h) for h in ("127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost"))
    text = " ".join(CliRunner().invoke(main, ["ui", "--help"]).output.split())
    assert "--allow-remote" in text and "without authentication" in text and "every machine" in text
