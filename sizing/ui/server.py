"""The `sizing ui` web server: the standard library's ThreadingHTTPServer, no dependency. It
serves the package's static files (by exact name from a list made at start-up, so no request
path reaches the file system) and the JSON API of sizing.ui.api:

    GET  /                          the page
    GET  /static/NAME               a file of sizing/ui/static/
    GET  /api/lists                 presets, GPUs (`sizing presets` / `sizing gpus` JSON), options, groups
    GET  /api/ENDPOINT?key=value..  one question (sizing.ui.api.ENDPOINTS: every command that answers one)
    POST /api/ENDPOINT              the same, body {"pairs": [[key, value], ...]} (a pasted config)
    GET|POST /api/fits/ENDPOINT     the same question on every GPU: [{gpu, fits}]

Bad input answers 400 {"error": "<the CLI's one-line message>"}."""

from __future__ import annotations

import json
import sys
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import ClassVar
from urllib.parse import parse_qsl, urlsplit

from sizing.ui.api import ENDPOINTS, ApiError, answer, fits_by_gpu, lists

MAX_BODY_BYTES = 1 << 20  # a pasted config.json is a few KiB
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


def _lists() -> dict:
    """sizing.ui.api.lists: the name lists, each endpoint's options and model inputs, the groups."""
    return lists()


class Handler(BaseHTTPRequestHandler):
    server_version = "sizing-ui"
    files: ClassVar[dict[str, bytes]] = {}
    allowed_hosts: ClassVar[frozenset[str]] = frozenset()

    def log_message(self, format, *args):  # quiet: one line per request would bury the URL
        pass

    def do_GET(self):
        self._route(parse_qsl(urlsplit(self.path).query, keep_blank_values=True))

    def do_POST(self):
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_BODY_BYTES:
            return self._json(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, {"error": "Content-Length must be 0 to 1 MiB"})
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
            pairs = [(str(k), str(v)) for k, v in body.get("pairs", [])]
        except (ValueError, TypeError, AttributeError):
            return self._json(HTTPStatus.BAD_REQUEST, {"error": 'body must be {"pairs": [[key, value], ...]}'})
        self._route(pairs)

    def _route(self, pairs):
        # DNS rebinding: a page elsewhere cannot reach this server under its own host name
        if self.headers.get("Host", "").rsplit(":", 1)[0] not in self.allowed_hosts:
            return self._json(HTTPStatus.FORBIDDEN, {"error": "unknown Host header"})
        path = urlsplit(self.path).path
        if path in ("/", "/index.html"):
            return self._file("index.html")
        if path.startswith("/static/"):
            return self._file(path[len("/static/") :])
        parts = path.strip("/").split("/")
        try:
            if parts == ["api", "lists"]:
                return self._json(HTTPStatus.OK, _lists())
            if len(parts) == 2 and parts[0] == "api" and parts[1] in ENDPOINTS:
                return self._json(HTTPStatus.OK, answer(parts[1], pairs))
            if len(parts) == 3 and parts[:2] == ["api", "fits"] and parts[2] in ENDPOINTS:
                return self._json(HTTPStatus.OK, fits_by_gpu(parts[2], pairs))
        except ApiError as exc:
            return self._json(HTTPStatus.BAD_REQUEST, {"error": str(exc)})
        except Exception as exc:  # one line, never a traceback page
            return self._json(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": f"{type(exc).__name__}: {exc}"})
        self._json(HTTPStatus.NOT_FOUND, {"error": f"no such page: {path}"})

    def _file(self, name: str):
        data = self.files.get(name)  # exact names only: '..' or an absolute path is never a key
        if data is None:
            return self._json(HTTPStatus.NOT_FOUND, {"error": "no such file"})
        self._send(HTTPStatus.OK, data, CONTENT_TYPES["." + name.rsplit(".", 1)[-1]])

    def _json(self, status, payload):
        self._send(status, json.dumps(payload, allow_nan=False).encode(), "application/json")

    def _send(self, status, data: bytes, content_type: str):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for key, value in SECURITY_HEADERS.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)


def make_server(host: str = "127.0.0.1", port: int = 0) -> ThreadingHTTPServer:
    """A server bound to host:port (0: any free port), not yet serving."""
    handler = type("UiHandler", (Handler,), {})
    handler.files = static_files()
    server = ThreadingHTTPServer((host, port), handler)
    handler.allowed_hosts = frozenset({"127.0.0.1", "localhost", "[::1]", host})
    server.daemon_threads = True
    return server


def url_of(server: ThreadingHTTPServer) -> str:
    host, port = server.server_address[:2]
    return f"http://{host}:{port}/"


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
