"""The exporter's HTTP server on loopback, fed with a real recording's intervals:
content negotiation, the pprof endpoints and ?seconds, bad --listen values and a port
in use, and slow or hostile clients that must not stall recording."""

from __future__ import annotations

import gzip
import http.client
import socket
import threading
import time

import pytest
from prometheus_client.openmetrics.parser import (
    text_string_to_metric_families as parse_openmetrics,
)
from prometheus_client.parser import text_string_to_metric_families

from lockscope.errors import UsageError
from lockscope.export import ExportServer, ExportState
from lockscope.export.profile_pb2 import Profile
from lockscope.run.loopfs import make_loopfs

from export_recording import record
from patience import patience

pytestmark = pytest.mark.kernel


@pytest.fixture(scope="module")
def intervals(tmp_path_factory):
    fs = make_loopfs("ext4", size_bytes=1 << 30)
    try:
        _, _, lines = record(fs.path, tmp_path_factory.mktemp("rec"), seconds=3.0)
    finally:
        fs.destroy()
    assert len(lines) >= 5
    return lines


@pytest.fixture
def served(intervals):
    """(state fed with all but the last two intervals, a started server, the rest)."""
    state = ExportState()
    for iv in intervals[:-2]:
        state.add_interval(iv)
    server = ExportServer.bind("127.0.0.1:0", state, deadline_s=5.0, max_connections=4)
    server.start()
    try:
        yield state, server, intervals[-2:]
    finally:
        server.stop()


def get(server: ExportServer, path: str, headers: dict[str, str] | None = None):
    conn = http.client.HTTPConnection(server.listen.host, server.listen.port, timeout=patience(20))
    try:
        conn.request("GET", path, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, dict(resp.getheaders()), resp.read()
    finally:
        conn.close()


def test_metrics_content_negotiation(served):
    _, server, _ = served
    status, headers, body = get(server, "/metrics")
    assert status == 200 and headers["Content-Type"].startswith("text/plain; version=0.0.4")
    names = {f.name for f in text_string_to_metric_families(body.decode())}
    assert "lockscope_lock_wait_seconds" in names
    status, headers, body = get(server, "/metrics", {
        "Accept": "application/openmetrics-text;version=1.0.0,text/plain;q=0.5",
        "Accept-Encoding": "gzip"})
    assert status == 200 and headers["Content-Type"].startswith("application/openmetrics-text")
    assert headers.get("Content-Encoding") == "gzip"
    text = gzip.decompress(body).decode()
    assert text.rstrip().endswith("# EOF")
    assert "lockscope_lock_wait_seconds" in {f.name for f in parse_openmetrics(text)}


def test_pprof_endpoints(served):
    state, server, _ = served
    for kind in ("mutex", "block"):
        status, headers, body = get(server, f"/debug/pprof/{kind}")
        assert status == 200 and headers["Content-Type"] == "application/octet-stream"
        prof = Profile.FromString(gzip.decompress(body))
        st = prof.string_table
        assert [(st[v.type], st[v.unit]) for v in prof.sample_type] == \
            [("contentions", "count"), ("delay", "nanoseconds")]
        assert (st[prof.period_type.type], st[prof.period_type.unit]) == \
            ("contentions", "count")
        assert prof.sample and all(len(s.value) == 2 for s in prof.sample)
        assert {st[m.filename] for m in prof.mapping} == {"[kernel.kallsyms]", "[user]"}
    whole = Profile.FromString(gzip.decompress(get(server, "/debug/pprof/mutex")[2]))
    last = Profile.FromString(gzip.decompress(get(server, "/debug/pprof/mutex?seconds=1")[2]))
    assert 0 < sum(s.value[1] for s in last.sample) < sum(s.value[1] for s in whole.sample)
    assert last.duration_nanos < whole.duration_nanos
    for bad in ("seconds=x", "seconds=0", "seconds=-5"):
        status, _, body = get(server, f"/debug/pprof/block?{bad}")
        assert status == 400 and body.count(b"\n") == 1, body
    assert get(server, "/debug/pprof/heap")[0] == 404
    status, headers, page = get(server, "/")
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    for link in (b"/metrics", b"/debug/pprof/mutex", b"/debug/pprof/block"):
        assert b'href="' + link in page
    assert page.count(b"<tr>") == len(state.snapshot().lines) + 1


@pytest.mark.parametrize("listen, words", [
    ("127.0.0.1:99999", "not a number"),
    ("127.0.0.1:http", "not a number"),
    ("::1:9433", "brackets"),
    ("[::1", "[IPV6]:PORT"),
    ("no-such-host.invalid:9433", "cannot resolve"),
    ("", "empty"),
    ("192.0.2.1:9433", "not one of this host's"),
])
def test_bad_listen_is_one_line(listen, words):
    with pytest.raises(UsageError) as err:
        ExportServer.bind(listen, ExportState())
    msg = str(err.value)
    assert words in msg and "\n" not in msg and err.value.exit_code == 2


def test_port_in_use_and_default_host():
    state = ExportState()
    blocker = socket.socket()
    blocker.bind(("127.0.0.1", 0))
    blocker.listen()
    port = blocker.getsockname()[1]
    try:
        with pytest.raises(UsageError, match="in use"):
            ExportServer.bind(f"127.0.0.1:{port}", state)
        with pytest.raises(UsageError, match="in use"):
            ExportServer.bind(str(port), state)   # the default host is loopback
    finally:
        blocker.close()
    # nothing was left bound by the failures: the port is free again
    server = ExportServer.bind(f":{port}", state)
    try:
        assert (server.listen.host, server.listen.port) == ("127.0.0.1", port)
    finally:
        server.stop()


def test_slow_clients_do_not_stall_recording(served):
    state, server, rest = served
    addr = (server.listen.host, server.listen.port)
    # one client sends half a request and stops; one asks for a profile and never reads
    stalled = socket.create_connection(addr)
    stalled.sendall(b"GET /metrics HTTP/1.0\r\nHost: x\r\n")
    unread = socket.create_connection(addr)
    unread.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
    unread.sendall(b"GET /debug/pprof/block HTTP/1.0\r\n\r\n")
    before = state.snapshot().intervals
    done = threading.Event()

    def feed():
        for iv in rest:
            state.add_interval(iv)
        done.set()

    t = threading.Thread(target=feed)
    t.start()
    t.join(patience(30))
    assert done.is_set(), "add_interval waited for a client"
    # the slow clients are still connected (the server has not answered the first)
    stalled.setblocking(False)
    with pytest.raises(BlockingIOError):
        stalled.recv(1)
    # and a scrape meanwhile sees the new intervals
    status, _, body = get(server, "/metrics")
    assert status == 200
    fams = {f.name: f for f in text_string_to_metric_families(body.decode())}
    assert fams["lockscope_recorder_intervals"].samples[0].value == before + len(rest)
    # the deadline (5 s here) ends the stalled request: the server closes it
    stalled.setblocking(True)
    stalled.settimeout(patience(30))
    t0 = time.monotonic()
    assert stalled.recv(1) == b""
    assert time.monotonic() - t0 < 30
    stalled.close()
    unread.close()


def test_connection_cap_refuses_the_excess(served):
    _, server, _ = served
    addr = (server.listen.host, server.listen.port)
    held = [socket.create_connection(addr) for _ in range(4)]
    try:
        for s in held:
            s.sendall(b"GET / HTTP/1.0\r\n")   # never finished
        time.sleep(0.5)
        extra = socket.create_connection(addr)
        extra.settimeout(patience(10))
        extra.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
        try:
            assert extra.recv(100) == b""   # closed without an answer
        except ConnectionResetError:
            pass
        extra.close()
    finally:
        for s in held:
            s.close()
    # once they are gone, requests are served again
    deadline = time.monotonic() + patience(10)
    while time.monotonic() < deadline:
        try:
            if get(server, "/metrics")[0] == 200:
                break
        except (ConnectionError, http.client.HTTPException):
            time.sleep(0.2)
    else:
        pytest.fail("the server did not serve again after the held connections closed")


def test_ipv6_loopback_in_brackets():
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        # no IPv6 loopback here: the same address is refused in one line instead
        with pytest.raises(UsageError):
            ExportServer.bind("[::1]:0", ExportState())
        return
    server = ExportServer.bind("[::1]:0", ExportState())
    server.start()
    try:
        assert server.url.startswith("http://[::1]:")
        assert get(server, "/metrics")[0] == 200
    finally:
        server.stop()
