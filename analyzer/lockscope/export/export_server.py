"""The exporter's HTTP server: /metrics, /debug/pprof/mutex, /debug/pprof/block and `/`.

A stdlib ThreadingHTTPServer in a thread of its own. Every request reads one
immutable snapshot of the ExportState (the state's lock is held only to swap
snapshots), so neither a slow client nor a large profile can stall the recording side.
Requests are bounded: a socket timeout on every read and write, a deadline for the
whole request (enforced by the serving loop, which shuts the connection down), and a
cap on connections served at once (the rest are closed at once). Responses are
HTTP/1.0, one request per connection.
"""

from __future__ import annotations

import errno
import gzip
import socket
import socketserver
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from prometheus_client.exposition import choose_encoder, gzip_accepted

from ..errors import LockscopeError, UsageError
from .export_state import ExportState
from .listen_address import ListenAddress, parse_listen
from .live_page import render_page
from .metrics_registry import make_registry
from .profile_windows import parse_seconds, profile_bytes

REQUEST_TIMEOUT_S = 5.0     # each socket read or write
REQUEST_DEADLINE_S = 15.0   # a whole request, however slowly it trickles
MAX_CONNECTIONS = 16


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, addr: ListenAddress, state: ExportState, deadline_s: float,
                 max_connections: int) -> None:
        self.address_family = addr.family
        self.state = state
        self.registry = make_registry(state.snapshot)
        self.deadline_s = deadline_s
        self.slots = threading.BoundedSemaphore(max_connections)
        self.active: dict[socket.socket, float] = {}
        self.active_lock = threading.Lock()
        super().__init__((addr.host, addr.port), _Handler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind looks the host up in DNS (getfqdn): not needed here
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name = str(host)
        self.server_port = int(port)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self.slots.acquire(blocking=False):
            self.shutdown_request(request)   # too many at once: refuse, do not queue
            return
        with self.active_lock:
            self.active[request] = time.monotonic() + self.deadline_s
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._forget(request)
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._forget(request)

    def _forget(self, request: Any) -> None:
        with self.active_lock:
            if self.active.pop(request, None) is not None:
                self.slots.release()

    def service_actions(self) -> None:
        """Called by the serving loop between polls: end requests past the deadline."""
        now = time.monotonic()
        with self.active_lock:
            late = [s for s, t in self.active.items() if t < now]
        for s in late:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close_all(self) -> None:
        with self.active_lock:
            socks = list(self.active)
        for s in socks:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    timeout = REQUEST_TIMEOUT_S
    protocol_version = "HTTP/1.0"
    server_version = "lockscope"

    def log_message(self, format: str, *args: Any) -> None:
        pass  # a scrape every few seconds is not news

    def _send(self, code: int, body: bytes, ctype: str,
              headers: list[tuple[str, str]] | None = None) -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers or []:
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        try:
            if url.path == "/metrics":
                self._metrics()
            elif url.path in ("/debug/pprof/mutex", "/debug/pprof/block"):
                seconds = parse_seconds(query["seconds"][-1] if "seconds" in query else None)
                kind = url.path.rsplit("/", 1)[1]
                body = profile_bytes(self.server.state.snapshot(), kind, seconds)
                self._send(200, body, "application/octet-stream",
                           [("Content-Disposition", f'attachment; filename="{kind}"'),
                            ("X-Content-Type-Options", "nosniff")])
            elif url.path in ("/", "/debug/pprof", "/debug/pprof/"):
                self._send(200, render_page(self.server.state.snapshot()),
                           "text/html; charset=utf-8")
            else:
                self._send(404, b"404 not found: see / for what is served\n",
                           "text/plain; charset=utf-8")
        except UsageError as e:
            self._send(400, f"400 bad request: {e}\n".encode(), "text/plain; charset=utf-8")
        except (ConnectionError, TimeoutError, OSError):
            pass  # the client went away or was too slow: nothing to answer

    def _metrics(self) -> None:
        encoder, ctype = choose_encoder(self.headers.get("Accept", ""))
        body = encoder(self.server.registry)
        headers = []
        if gzip_accepted(self.headers.get("Accept-Encoding", "")):
            body = gzip.compress(body)
            headers.append(("Content-Encoding", "gzip"))
        self._send(200, body, ctype, headers)


class ExportServer:
    """The exporter's HTTP server over an ExportState; see the package docstring."""

    def __init__(self, httpd: _Server, listen: ListenAddress) -> None:
        self._httpd = httpd
        self.listen = listen
        self._thread: threading.Thread | None = None

    @classmethod
    def bind(cls, listen: str, state: ExportState, *,
             deadline_s: float = REQUEST_DEADLINE_S,
             max_connections: int = MAX_CONNECTIONS) -> ExportServer:
        """Bind ``[HOST:]PORT`` (port 0: any free port). A bad address, a port in use
        or one not allowed is a UsageError naming it; nothing is left bound."""
        addr = parse_listen(listen)
        try:
            httpd = _Server(addr, state, deadline_s, max_connections)
        except OSError as e:
            why = {errno.EADDRINUSE: "the port is in use",
                   errno.EADDRNOTAVAIL: "the address is not one of this host's",
                   errno.EACCES: "permission denied"}.get(e.errno or 0, e.strerror or str(e))
            raise UsageError(f"--listen {listen}: cannot listen on {addr}: {why}") from None
        host, port = httpd.server_address[:2]
        return cls(httpd, ListenAddress(str(host), int(port), addr.family))

    @property
    def url(self) -> str:
        return f"http://{self.listen}"

    def start(self) -> None:
        if self._thread is not None:
            raise LockscopeError("the export server is already started")
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        kwargs={"poll_interval": 0.25},
                                        name="lockscope-export", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop serving, end requests in flight, close the socket. Idempotent."""
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join()
            self._thread = None
        self._httpd.close_all()
        self._httpd.server_close()
