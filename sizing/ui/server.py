"""The `sizing ui` web server, on the standard library alone. It serves the package's static
files (by exact name from a list made at start-up, so no request path reaches the file system)
and the JSON API of sizing.ui.api:

    GET  /                          the page
    GET  /static/NAME               a file of sizing/ui/static/
    GET  /api/lists                 presets, GPUs (`sizing presets` / `sizing gpus` JSON), options, groups
    GET  /api/ENDPOINT?key=value..  one question (sizing.ui.api.ENDPOINTS: every command that answers one)
    POST /api/ENDPOINT              the same, body {"pairs": [[key, value], ...]} (a pasted config),
                                    Content-Type: application/json
    GET|POST /api/fits/ENDPOINT     the same question on every GPU: [{gpu, fits}]

Bad input answers 400 {"error": "<the CLI's one-line message>"}; a calculation past the time
budget 504, a server whose calculation workers all stay busy 503 (sizing.ui.workers). Requests
are served concurrently by a bounded pool of threads; the listen backlog takes a burst of
hundreds; an idle connection is closed after IDLE_TIMEOUT_S. A request from a page of another
site (its Origin or Sec-Fetch-Site says so, or its Host is not this server's name) is refused."""

from __future__ import annotations

import functools
import ipaddress
import json
import socket
import sys
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, HTTPServer
from importlib import resources
from typing import ClassVar
from urllib.parse import parse_qsl, urlsplit

from sizing.ui.api import ENDPOINTS, ApiError, answer, fits_by_gpu, lists
from sizing.ui.workers import COMPUTE_WORKERS, DEFAULT_BUDGET_S, Busy, ComputePool, TooSlow, connection_pool

MAX_BODY_BYTES = 1 << 20  # a pasted config.json is a few KiB
IDLE_TIMEOUT_S = 10  # a connection that sends nothing for this long is closed (its thread freed)
LISTEN_BACKLOG = 1024  # connections the kernel holds while every connection thread is busy
LOOPBACK_NAMES = ("localhost",)
CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".png": "image/png",
    ".txt": "text/plain; charset=utf-8",
    ".md": "text/plain; charset=utf-8",
}
# the page loads nothing from elsewhere, and no inline script runs
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
# Sec-Fetch-Site values of a request this server's own page (or a typed URL, or a script) makes
SAME_SITE_FETCHES = ("same-origin", "none")


def static_files() -> dict[str, bytes]:
    """Relative name -> bytes of every file under sizing/ui/static/, read once."""
    found = {}

    def walk(folder, prefix):
        for entry in folder.iterdir():
            name = prefix + entry.name
            if entry.is_dir():
                walk(entry, name + "/")
            elif entry.is_file() and any(name.endswith(ext) for ext in CONTENT_TYPES):
                found[name] = entry.read_bytes()

    walk(resources.files("sizing.ui") / "static", "")
    return found


@functools.cache
def _lists() -> dict:
    """sizing.ui.api.lists: the name lists, each endpoint's options and model inputs, the groups."""
    return lists()


def is_loopback(host: str) -> bool:
    """127.0.0.0/8, ::1 or localhost: reachable from this machine only ('' and 0.0.0.0 are every interface)."""
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class Handler(BaseHTTPRequestHandler):
    server_version = "sizing-ui"
    timeout = IDLE_TIMEOUT_S  # the socket's timeout (StreamRequestHandler applies it)
    files: ClassVar[dict[str, bytes]] = {}
    allowed_hosts: ClassVar[frozenset[str] | None] = frozenset()  # None: any (every interface, --allow-remote)
    compute: ClassVar[ComputePool]

    def log_message(self, format, *args):  # quiet: one line per request would bury the URL
        pass

    def do_GET(self):
        self._route(parse_qsl(urlsplit(self.path).query, keep_blank_values=True))

    def do_POST(self):
        if self.headers.get_content_type() != "application/json":
            return self._json(
                HTTPStatus.UNSUPPORTED_MEDIA_TYPE, {"error": "POST a JSON body (Content-Type: application/json)"}
            )
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_BODY_BYTES:
            return self._json(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, {"error": "Content-Length must be 0 to 1 MiB"})
        pairs = _pairs(self.rfile.read(length))
        if pairs is None:
            return self._json(HTTPStatus.BAD_REQUEST, {"error": 'body must be {"pairs": [[key, value], ...]}'})
        self._route(pairs)

    def _foreign(self) -> str | None:
        """Why a request comes from elsewhere, or None. DNS rebinding: a page elsewhere cannot reach
        this server under its own host name; cross-site requests (a form or fetch of another site's
        page) carry that site in Origin or Sec-Fetch-Site."""
        host = self.headers.get("Host", "")
        if self.allowed_hosts is not None and host.rsplit(":", 1)[0] not in self.allowed_hosts:
            return "unknown Host header"
        origin = self.headers.get("Origin")
        if origin is not None and origin != f"http://{host}":
            return "a request from another site's page (Origin) is refused"
        if self.headers.get("Sec-Fetch-Site", "same-origin") not in SAME_SITE_FETCHES:
            return "a request from another site's page (Sec-Fetch-Site) is refused"
        return None

    def _route(self, pairs):
        foreign = self._foreign()
        if foreign is not None:
            return self._json(HTTPStatus.FORBIDDEN, {"error": foreign})
        path = urlsplit(self.path).path
        if path in ("/", "/index.html"):
            return self._file("index.html")
        if path.startswith("/static/"):
            return self._file(path[len("/static/") :])
        work = _work(path.strip("/").split("/"), pairs)
        if work is None:
            return self._json(HTTPStatus.NOT_FOUND, {"error": f"no such page: {path}"})
        try:
            return self._json(HTTPStatus.OK, self.compute.run(*work))
        except ApiError as exc:
            return self._json(HTTPStatus.BAD_REQUEST, {"error": str(exc)})
        except Busy as exc:
            return self._json(HTTPStatus.SERVICE_UNAVAILABLE, {"error": str(exc)})
        except TooSlow as exc:
            return self._json(HTTPStatus.GATEWAY_TIMEOUT, {"error": str(exc)})
        except Exception as exc:  # one line, never a traceback page
            return self._json(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": f"{type(exc).__name__}: {exc}"[:300]})

    def _file(self, name: str):
        data = self.files.get(name)  # exact names only: '..' or an absolute path is never a key
        if data is None:
            return self._json(HTTPStatus.NOT_FOUND, {"error": "no such file"})
        self._send(HTTPStatus.OK, data, CONTENT_TYPES["." + name.rsplit(".", 1)[-1]])

    def _json(self, status, payload):
        self._send(status, json.dumps(payload, allow_nan=False).encode(), "application/json")

    def _send(self, status, data: bytes, content_type: str):
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            for key, value in SECURITY_HEADERS.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)
        except OSError:  # the client went away (BrokenPipe, reset, timeout): nothing to tell it
            self.close_connection = True


def _work(parts: list[str], pairs):
    """(function, args) answering an API path, or None when the path is not the API's."""
    if parts == ["api", "lists"]:
        return (_lists,)
    if len(parts) == 2 and parts[0] == "api" and parts[1] in ENDPOINTS:
        return answer, parts[1], pairs
    if len(parts) == 3 and parts[:2] == ["api", "fits"] and parts[2] in ENDPOINTS:
        return fits_by_gpu, parts[2], pairs
    return None


def _pairs(body: bytes) -> list[tuple[str, str]] | None:
    """The (key, value) pairs of a POST body {"pairs": [[key, value], ...]}; None when it is not
    that (keys and values are strings or numbers; nesting of any depth is refused, never recursed)."""
    try:
        data = json.loads(body or b"{}")
    except (ValueError, RecursionError):
        return None
    items = data.get("pairs", []) if isinstance(data, dict) else None
    if not isinstance(items, list):
        return None
    scalar = (str, int, float, bool)
    if not all(isinstance(p, list) and len(p) == 2 and all(isinstance(x, scalar) for x in p) for p in items):
        return None
    return [(str(k), str(v)) for k, v in items]


class UiServer(HTTPServer):
    """An HTTPServer whose connections run on a bounded thread pool (ThreadingHTTPServer starts
    a thread per connection, without bound), with a listen backlog for bursts, and without a
    traceback on stderr when a client goes away."""

    request_queue_size = LISTEN_BACKLOG
    allow_reuse_address = True

    def __init__(self, address, handler, compute: ComputePool):
        self.pool, self.compute = connection_pool(), compute
        super().__init__(address, handler)

    def process_request(self, request, client_address):
        self.pool.submit(self._serve_one, request, client_address)

    def _serve_one(self, request, client_address):
        try:
            self.finish_request(request, client_address)
        except Exception:
            self.handle_error(request, client_address)
        finally:
            self.shutdown_request(request)

    def handle_error(self, request, client_address):
        exc = sys.exc_info()[1]
        if isinstance(exc, (OSError, socket.timeout)):  # BrokenPipe, reset, an idle client timed out
            return
        print(f"sizing ui: {type(exc).__name__}: {exc}", file=sys.stderr)

    def server_close(self):
        super().server_close()
        self.pool.shutdown(wait=False, cancel_futures=True)
        self.compute.shutdown()


def make_server(
    host: str = "127.0.0.1",
    port: int = 0,
    budget_s: float = DEFAULT_BUDGET_S,
    idle_timeout_s: float = IDLE_TIMEOUT_S,
    compute_workers: int = COMPUTE_WORKERS,
) -> UiServer:
    """A server bound to host:port (0: any free port), not yet serving; each request answered
    within `budget_s` seconds or refused with 503/504, and a connection idle for `idle_timeout_s`
    closed. A host that is not this machine's is
    the caller's decision (`sizing ui --allow-remote`); every interface ('' or 0.0.0.0) then
    answers any Host name."""
    handler = type("UiHandler", (Handler,), {})
    handler.files = static_files()
    handler.compute, handler.timeout = ComputePool(compute_workers, budget_s), idle_timeout_s
    bare = host.strip("[]")
    family = socket.AF_INET6 if ":" in bare else socket.AF_INET
    server_class = type("UiServerOf", (UiServer,), {"address_family": family})
    server = server_class((bare, port), handler, handler.compute)
    shown = f"[{bare}]" if ":" in bare else bare
    handler.allowed_hosts = (
        None if bare in ("", "0.0.0.0", "::") else frozenset({"127.0.0.1", "localhost", "[::1]", shown})
    )
    return server


def url_of(server: HTTPServer) -> str:
    host, port = server.server_address[:2]
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


def serve_forever(host: str, port: int, open_browser: bool) -> None:
    server = make_server(host, port)
    url = url_of(server)
    print(f"sizing ui: {url}  (Ctrl+C stops)", file=sys.stderr)
    if open_browser:
        import webbrowser

        webbrowser.open(url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
