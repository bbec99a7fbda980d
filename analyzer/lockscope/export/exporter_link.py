"""The recording side's handle on the exporter process (exporter_process).

``ExporterLink`` binds the listening socket and reads --web-config here, where a bad
address or file is one line before anything is attached; then it starts the exporter
process, which drops every privilege, and feeds it through a pipe: intervals, context,
the web configuration. Writes go through a bounded queue and a thread of their own, so a
slow or dead exporter never holds up the recording (intervals it could not take are
counted, not waited for). The thread also starts the exporter again if it ended (its
context and configuration are sent again; counters restart, as any exporter's do after
a restart) and looks at the web configuration's files once a second: a change is read and
checked here and served from the next connection on; a bad one keeps the last good
configuration and sets ``lockscope_web_config_last_reload_successful`` to 0.
"""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from ..errors import LockscopeError, UsageError
from .export_server import listen_socket
from .path_redaction import PathRedactor
from .web_config import WebConfig, files_named, load_web_config

QUEUE_DEPTH = 64
WATCH_EVERY_S = 1.0
RESTART_PAUSE_S = 1.0


def _interpreter() -> list[str]:
    """This interpreter with the flags it runs under (the release's -E -s)."""
    flags = []
    if sys.flags.isolated:
        flags.append("-I")
    else:
        if sys.flags.ignore_environment:
            flags.append("-E")
        if sys.flags.no_user_site:
            flags.append("-s")
    return [sys.executable, *flags]


def _stamp(paths: list[str]) -> tuple:
    out: list[tuple] = []
    for p in paths:
        try:
            st = os.stat(p)
            out.append((p, st.st_ino, st.st_size, st.st_mtime_ns))
        except OSError:
            out.append((p, None))
    return tuple(out)


class ExporterLink:
    def __init__(self, listen: str, *, top_files: int, web_config: str | None = None,
                 user: str | None = None, redact_outside: list[str] | None = None,
                 say: Callable[[str], None] = lambda s: None) -> None:
        self.web_path = web_config
        self.web: WebConfig | None = load_web_config(web_config) if web_config else None
        self._stamp = _stamp(files_named(web_config)) if web_config else ()
        self.sock, self.listen = listen_socket(listen)      # UsageError: nothing bound
        self.top_files = top_files
        self.user = user
        self.redact = PathRedactor(redact_outside or [])
        self.say = say
        self.restarts = 0
        self.dropped = 0
        self._context: dict[str, Any] = {}
        self._queue: queue.Queue = queue.Queue(QUEUE_DEPTH)
        self._proc: subprocess.Popen | None = None
        self._conn: Connection | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        scheme = "https" if self.web is not None and self.web.tls is not None else "http"
        return f"{scheme}://{self.listen}"

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    # -- the recording side's interface (ExportState's) -----------------------------------

    def add_interval(self, iv: dict[str, Any]) -> None:
        self._put(("interval", self.redact(iv)))

    def set_context(self, **kw: Any) -> None:
        if "file_roles" in kw:
            kw["file_roles"] = self.redact.keys(dict(kw["file_roles"]))
        self._context.update(kw)
        self._put(("context", kw))

    def _put(self, msg: tuple[str, Any]) -> None:
        try:
            self._queue.put_nowait(msg)
        except queue.Full:
            self.dropped += 1

    # -- the process ------------------------------------------------------------------

    def start(self) -> None:
        self._spawn()
        self._thread = threading.Thread(target=self._run, name="exporter-link", daemon=True)
        self._thread.start()

    def _spawn(self) -> None:
        read_fd, write_fd = os.pipe()
        argv = [*_interpreter(), "-m", "lockscope.export.exporter_process",
                "--host", self.listen.host, "--port", str(self.listen.port),
                "--top-files", str(self.top_files), "--listen-fd", str(self.sock.fileno()),
                "--pipe-fd", str(read_fd)]
        if self.user:
            argv += ["--user", self.user]
        env = dict(os.environ)
        # the package from where this one was imported (a checkout runs from PYTHONPATH)
        env["PYTHONPATH"] = os.pathsep.join(
            [str(Path(__file__).resolve().parents[2]), env.get("PYTHONPATH", "")]).rstrip(":")
        try:
            self._proc = subprocess.Popen(argv, pass_fds=(self.sock.fileno(), read_fd),
                                          cwd="/", env=env, stdin=subprocess.DEVNULL)
        finally:
            os.close(read_fd)
        self._conn = Connection(write_fd, readable=False)
        self._conn.send(("web", self.web))
        context = dict(self._context)
        if self.web_path:
            context["web_config_ok"] = self._context.get("web_config_ok", True)
        context["exporter_restarts"] = self.restarts
        self._conn.send(("context", context))

    def _send(self, msg: tuple[str, Any]) -> None:
        assert self._conn is not None
        try:
            self._conn.send(msg)
        except OSError:
            self._respawn()

    def _respawn(self) -> None:
        """The exporter ended: say so and start it again (a pause between tries)."""
        if self._stop.is_set():
            return
        rc = self._proc.wait() if self._proc is not None else None
        self.say(f"warning: the exporter process ended (exit status {rc}); starting it again")
        if self._conn is not None:
            self._conn.close()
        if self._stop.wait(RESTART_PAUSE_S):
            return
        self.restarts += 1
        try:
            self._spawn()
        except (OSError, LockscopeError) as exc:
            self.say(f"warning: cannot start the exporter again: {exc}")

    def _reload(self) -> None:
        assert self.web_path is not None
        stamp = _stamp(files_named(self.web_path))
        if stamp == self._stamp:
            return
        self._stamp = stamp
        try:
            web = load_web_config(self.web_path)
        except UsageError as exc:
            self.say(f"warning: {exc}; serving the last good web configuration")
            self._context["web_config_ok"] = False
            self._send(("context", {"web_config_ok": False}))
            return
        self._context["web_config_ok"] = True
        if web.digest != (self.web.digest if self.web else None):
            self.web = web
            self._send(("web", web))
            self.say(f"web configuration {self.web_path} reloaded")
        self._send(("context", {"web_config_ok": True}))

    def _run(self) -> None:
        next_watch = time.monotonic() + WATCH_EVERY_S
        while not self._stop.is_set():
            try:
                msg = self._queue.get(timeout=WATCH_EVERY_S)
            except queue.Empty:
                msg = None
            if self._stop.is_set():
                break
            if msg is not None:
                self._send(msg)
            if time.monotonic() >= next_watch:
                next_watch = time.monotonic() + WATCH_EVERY_S
                if self._proc is not None and self._proc.poll() is not None:
                    self._respawn()
                elif self.web_path:
                    self._reload()

    def stop(self) -> None:
        """Stop the exporter (it ends requests in flight) and close the socket. Idempotent."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._conn is not None:
            self._conn.close()      # EOF: the exporter stops serving and exits
            self._conn = None
        if self._proc is not None:
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        self.sock.close()
