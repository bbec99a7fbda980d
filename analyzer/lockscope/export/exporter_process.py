"""The exporter's own process (``python -m lockscope.export.exporter_process``): the one
part of lockscope that reads from the network, run without root or any capability.

Its parent (exporter_link) binds the listening socket and passes it (--listen-fd), and
writes to it through a pipe (--pipe-fd): the intervals, the context and the web configuration, as
pickled messages; nothing is ever read back from this process. It drops every privilege
(privilege_drop) before it serves a byte, and exits when the pipe closes (its parent is
gone).
"""

from __future__ import annotations

import argparse
import signal
import socket
import sys
import threading
from multiprocessing.connection import Connection

# everything a request can touch is imported now, before the privileges go: the files
# of the package may not be readable by the unprivileged user
import bcrypt  # noqa: F401
import prometheus_client.exposition  # noqa: F401

from ..errors import LockscopeError
from .export_server import ExportServer
from .export_state import ExportState
from .listen_address import ListenAddress
from .privilege_drop import drop_privileges

STATS_EVERY_S = 1.0


def _serve(server: ExportServer, state: ExportState, pipe: Connection) -> None:
    stop = threading.Event()

    def publish() -> None:
        while not stop.wait(STATS_EVERY_S):
            state.set_context(http_refused=server.failures)

    threading.Thread(target=publish, daemon=True, name="exporter-stats").start()
    try:
        while True:
            kind, body = pipe.recv()
            if kind == "interval":
                try:
                    state.add_interval(body)
                except ValueError:
                    pass    # not an interval: skipped
            elif kind == "context":
                state.set_context(**body)
            elif kind == "web":
                server.set_web(body)
    except (EOFError, OSError):
        pass                # the parent is gone or closed the pipe: stop serving
    finally:
        stop.set()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="lockscope-exporter")
    ap.add_argument("--host", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--top-files", type=int, required=True)
    ap.add_argument("--user")
    ap.add_argument("--listen-fd", type=int, required=True)
    ap.add_argument("--pipe-fd", type=int, required=True)
    args = ap.parse_args(argv)
    # its parent decides when it ends (by closing the pipe), not a Ctrl-C at the terminal
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    pipe = Connection(args.pipe_fd, writable=False)
    sock = socket.socket(fileno=args.listen_fd)
    try:
        who = drop_privileges(args.user)
    except LockscopeError as exc:
        print(f"lockscope: {exc}", file=sys.stderr, flush=True)
        return 2
    kind, web = pipe.recv()          # the first message: the web configuration
    state = ExportState(top_files=args.top_files)
    addr = ListenAddress(args.host, args.port, sock.family)
    server = ExportServer.over(sock, addr, state, web=web if kind == "web" else None)
    print(f"exporter serving as {who}", file=sys.stderr, flush=True)
    server.start()
    try:
        _serve(server, state, pipe)
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
