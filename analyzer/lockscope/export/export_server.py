"""The exporter's HTTP server: /metrics, /debug/pprof/mutex, /debug/pprof/block and `/`.

A stdlib ThreadingHTTPServer in a thread of its own. Every request reads one
immutable snapshot of the ExportState (the state's lock is held only to swap
snapshots), so neither a slow client nor a large profile can stall the recording side.
Requests are bounded: a socket timeout on every read and write, a deadline for the
whole request (enforced by the serving loop, which shuts the connection down), and a
cap on connections served at once (the rest are closed at once). Responses are
HTTP/1.0, one request per connection.

With a web configuration (web_config: exporter-toolkit's file), connections are TLS (the
handshake runs in the connection's own thread, under the same timeout and deadline, so a
client that stalls in it holds one slot and nothing else) and requests need basic auth
(basic_auth: bounded bcrypt). ``set_web`` swaps the configuration between requests.
"""

from __future__ import annotations

import errno
import gzip
import socket
import socketserver
import ssl
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from prometheus_client.exposition import choose_encoder, gzip_accepted

from ..errors import LockscopeError, UsageError
from .basic_auth import BasicAuth
from .export_state import ExportState
from .listen_address import ListenAddress, parse_listen
from .live_page import render_page
from .metrics_registry import make_registry
from .profile_windows import parse_seconds, profile_bytes
from .web_config import WebConfig, tls_context

REQUEST_TIMEOUT_S = 5.0     # each socket read or write
REQUEST_DEADLINE_S = 15.0   # a whole request, however slowly it trickles
MAX_CONNECTIONS = 16


@dataclass
class _Web:
    """The configuration requests are served under; replaced whole, never changed."""

    config: WebConfig | None = None
    context: ssl.SSLContext | None = None
    auth: BasicAuth | None = None
    tokens: float = 0.0
    refilled: float = 0.0


def _web(config: WebConfig | None) -> _Web:
    if config is None:
        return _Web()
    return _Web(config, tls_context(config.tls) if config.tls else None,
                BasicAuth(config.users) if config.users else None,
                float(config.rate_burst), time.monotonic())


def listen_socket(listen: str) -> tuple[socket.socket, ListenAddress]:
    """A socket bound and listening on ``[HOST:]PORT``; a bad address, a port in use or
    one not allowed is a UsageError naming it, nothing left bound."""
    addr = parse_listen(listen)
    sock = socket.socket(addr.family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((addr.host, addr.port))
        sock.listen(64)
    except OSError as e:
        sock.close()
        why = {errno.EADDRINUSE: "the port is in use",
               errno.EADDRNOTAVAIL: "the address is not one of this host's",
               errno.EACCES: "permission denied"}.get(e.errno or 0, e.strerror or str(e))
        raise UsageError(f"--listen {listen}: cannot listen on {addr}: {why}") from None
    host, port = sock.getsockname()[:2]
    return sock, ListenAddress(str(host), int(port), addr.family)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, sock: socket.socket, state: ExportState, deadline_s: float,
                 max_connections: int, web: WebConfig | None) -> None:
        self.address_family = sock.family
        self.state = state
        self.registry = make_registry(state.snapshot)
        self.deadline_s = deadline_s
        self.slots = threading.BoundedSemaphore(max_connections)
        self.active: dict[socket.socket, float] = {}
        self.active_lock = threading.Lock()
        self.web = _web(web)
        self.web_lock = threading.Lock()
        self.tls_failures = 0
        self.auth_failures = 0
        super().__init__(sock.getsockname()[:2], _Handler, bind_and_activate=False)
        self.socket.close()
        self.socket = sock
        self.server_name = str(sock.getsockname()[0])
        self.server_port = int(sock.getsockname()[1])

    def set_web(self, config: WebConfig | None) -> None:
        web = _web(config)
        with self.web_lock:
            self.web = web

    def take_token(self) -> bool:
        """exporter-toolkit's rate_limit: a token bucket, one token per request."""
        with self.web_lock:
            web = self.web
            if web.config is None or not web.config.rate_interval_s:
                return True
            now = time.monotonic()
            web.tokens = min(float(web.config.rate_burst),
                             web.tokens + (now - web.refilled) / web.config.rate_interval_s)
            web.refilled = now
            if web.tokens < 1:
                return False
            web.tokens -= 1
            return True

    def get_request(self) -> tuple[Any, Any]:
        conn, client = self.socket.accept()
        context = self.web.context
        if context is None:
            return conn, client
        # the handshake waits for the client: it runs in the request's thread
        return context.wrap_socket(conn, server_side=True,
                                   do_handshake_on_connect=False), client

    def finish_request(self, request: Any, client_address: Any) -> None:
        if isinstance(request, ssl.SSLSocket):
            request.settimeout(REQUEST_TIMEOUT_S)
            try:
                request.do_handshake()
                _check_sans(request, self.web.config)
            except (OSError, ValueError):
                self.tls_failures += 1
                return     # plain HTTP, no or a wrong certificate, a stalled client
        super().finish_request(request, client_address)

    def server_bind(self) -> None:
        # HTTPServer.server_bind looks the host up in DNS (getfqdn): not needed here
        socketserver.TCPServer.server_bind(self)

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


def _check_sans(conn: ssl.SSLSocket, config: WebConfig | None) -> None:
    """client_allowed_sans: the verified client certificate must name one of them."""
    if config is None or config.tls is None or not config.tls.allowed_sans:
        return
    cert = conn.getpeercert() or {}
    names = {str(pair[1]) for pair in cert.get("subjectAltName", ())}
    if not names & set(config.tls.allowed_sans):
        raise ValueError("client certificate SAN not allowed")


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    timeout = REQUEST_TIMEOUT_S
    protocol_version = "HTTP/1.0"
    server_version = "lockscope"
    sys_version = ""

    def version_string(self) -> str:
        return self.server_version   # no interpreter version in the Server header

    def log_message(self, format: str, *args: Any) -> None:
        pass  # a scrape every few seconds is not news

    def _send(self, code: int, body: bytes, ctype: str,
              headers: list[tuple[str, str]] | None = None) -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        config = self.server.web.config
        for k, v in [*(config.headers if config else ()), *(headers or [])]:
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_HEAD(self) -> None:
        self.do_GET()

    def _allowed(self) -> bool:
        """Rate limit and basic auth; answers the refusal itself."""
        text = "text/plain; charset=utf-8"
        if not self.server.take_token():
            self._send(429, b"429 too many requests\n", text, [("Retry-After", "1")])
            return False
        auth = self.server.web.auth
        verdict = auth.check(self.headers.get("Authorization")) if auth else "ok"
        if verdict == "busy":
            self._send(429, b"429 too many password checks: try again\n", text,
                       [("Retry-After", "1")])
            return False
        if verdict != "ok":
            self.server.auth_failures += 1
            self._send(401, b"401 unauthorized\n", text,
                       [("WWW-Authenticate", 'Basic realm="lockscope"')])
            return False
        return True

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        try:
            if not self._allowed():
                return
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
             max_connections: int = MAX_CONNECTIONS,
             web: WebConfig | None = None) -> ExportServer:
        """Bind ``[HOST:]PORT`` (port 0: any free port). A bad address, a port in use
        or one not allowed is a UsageError naming it; nothing is left bound."""
        sock, addr = listen_socket(listen)
        return cls.over(sock, addr, state, deadline_s=deadline_s,
                        max_connections=max_connections, web=web)

    @classmethod
    def over(cls, sock: socket.socket, addr: ListenAddress, state: ExportState, *,
             deadline_s: float = REQUEST_DEADLINE_S,
             max_connections: int = MAX_CONNECTIONS,
             web: WebConfig | None = None) -> ExportServer:
        """Serve on a socket already bound and listening (listen_socket)."""
        return cls(_Server(sock, state, deadline_s, max_connections, web), addr)

    def set_web(self, config: WebConfig | None) -> None:
        """Serve the next requests under ``config`` (a reloaded web config)."""
        self._httpd.set_web(config)

    @property
    def failures(self) -> dict[str, int]:
        return {"tls_handshake": self._httpd.tls_failures,
                "basic_auth": self._httpd.auth_failures,
                "password_checks_refused": (self._httpd.web.auth.refused_busy
                                            if self._httpd.web.auth else 0)}

    @property
    def url(self) -> str:
        scheme = "https" if self._httpd.web.context is not None else "http"
        return f"{scheme}://{self.listen}"

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
