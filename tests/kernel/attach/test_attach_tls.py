"""``attach --continuous --web-config``: a real Prometheus scrapes it over TLS with a
client certificate and basic auth, in the exporter-toolkit's file format; scrapers
without the password or the certificate are refused; plain HTTP to the TLS port gets
nothing; a renewed certificate is served without a restart; a broken rewrite keeps the
last good configuration; wrong passwords in a loop stay within the password checks'
CPU bound; and the exporter process is neither root nor holds a capability."""

from __future__ import annotations

import base64
import json
import socket
import ssl
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import bcrypt
import pytest

from lockscope.export.basic_auth import CPU_SHARE, WINDOW_S
from lockscope.export.export_server import REQUEST_TIMEOUT_S

from conftest import require_kernel
from continuous_attach import continuous_on_a_sleeper, free_port
from patience import patience
from prometheus_server import api, start_prometheus, stop_prometheus, wait_for
from tls_certs import Pki

pytestmark = pytest.mark.kernel
PASSWORD = "scrape-me"


def _web_config(pki: Pki, path: Path) -> Path:
    hashed = bcrypt.hashpw(PASSWORD.encode(), bcrypt.gensalt(10)).decode()
    path.write_text(json.dumps({   # YAML is a superset of JSON
        "tls_server_config": {"cert_file": str(pki.path("server.crt")),
                              "key_file": str(pki.path("server.key")),
                              "client_auth_type": "RequireAndVerifyClientCert",
                              "client_ca_file": str(pki.path("ca.crt"))},
        "basic_auth_users": {"prometheus": hashed},
        "http_server_config": {"headers": {"X-Frame-Options": "deny"}}}))
    return path


def _context(pki: Pki, cert: str | None = "client") -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=str(pki.path("ca.crt")))
    if cert:
        ctx.load_cert_chain(str(pki.path(f"{cert}.crt")), str(pki.path(f"{cert}.key")))
    return ctx


def _get(port: int, pki: Pki, password: str | None = PASSWORD, cert: str | None = "client",
         path: str = "/metrics"):
    req = urllib.request.Request(f"https://127.0.0.1:{port}{path}")
    if password is not None:
        token = base64.b64encode(f"prometheus:{password}".encode()).decode()
        req.add_header("Authorization", f"Basic {token}")
    try:
        with urllib.request.urlopen(req, context=_context(pki, cert), timeout=patience(10)) as r:
            return r.status, dict(r.headers), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), ""


def _served_cert(port: int, pki: Pki) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=patience(10)) as raw, \
            _context(pki).wrap_socket(raw, server_hostname="127.0.0.1") as s:
        return s.getpeercert(binary_form=True) or b""


def _der(pem: Path) -> bytes:
    return ssl.PEM_cert_to_DER_cert(pem.read_text())


def _exporter_status(lockscope_pid: int) -> dict[str, str]:
    children = Path(f"/proc/{lockscope_pid}/task/{lockscope_pid}/children").read_text().split()
    for child in children:
        if "exporter_process" in Path(f"/proc/{child}/cmdline").read_text():
            fields = {}
            for line in Path(f"/proc/{child}/status").read_text().splitlines():
                k, _, v = line.partition(":")
                fields[k] = v.strip()
            fields["pid"] = child
            return fields
    raise AssertionError(f"no exporter process among {children}")


def test_prometheus_scrapes_over_tls_with_basic_auth(tmp_path):
    require_kernel()
    pki = Pki.make(tmp_path / "pki")
    web = _web_config(pki, tmp_path / "web.yml")
    port, prom_port = free_port(), free_port()
    with continuous_on_a_sleeper(["--web-config", str(web), "--no-report"], port) as (proc, err):
        # the process that reads from the network: not root, no capability, no_new_privs
        st = _exporter_status(proc.pid)
        assert "0" not in st["Uid"].split(), st
        for caps in ("CapInh", "CapPrm", "CapEff", "CapAmb"):
            assert int(st[caps], 16) == 0, st
        assert st["NoNewPrivs"] == "1"

        code, headers, body = _get(port, pki)
        assert code == 200 and "lockscope_target_up" in body
        assert headers["Server"] == "lockscope" and headers["X-Frame-Options"] == "deny"
        assert _get(port, pki, password=None)[0] == 401
        assert _get(port, pki, password="wrong")[0] == 401
        for cert in (None, "stranger"):     # no client certificate; one of another CA
            with pytest.raises((ssl.SSLError, urllib.error.URLError, ConnectionError)):
                _get(port, pki, cert=cert)
        with socket.create_connection(("127.0.0.1", port), timeout=patience(10)) as plain:
            plain.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
            assert plain.recv(4096) == b""      # plain HTTP: not one byte of HTTP back
        # a client that connects and never starts TLS holds one slot, and not for long
        with socket.create_connection(("127.0.0.1", port), timeout=patience(10)) as staller:
            assert _get(port, pki)[0] == 200
            staller.settimeout(patience(REQUEST_TIMEOUT_S * 4))
            t = time.monotonic()
            try:
                assert staller.recv(1) == b""
            except ConnectionResetError:
                pass
            assert time.monotonic() - t < REQUEST_TIMEOUT_S * 3

        # a real Prometheus, three jobs: right, without the password, without a cert
        good = {"ca_file": str(pki.path("ca.crt")), "cert_file": str(pki.path("client.crt")),
                "key_file": str(pki.path("client.key"))}
        jobs = {"good": (good, True), "nopassword": (good, False),
                "nocert": ({"ca_file": str(pki.path("ca.crt"))}, True)}
        prom = start_prometheus(tmp_path, f"127.0.0.1:{port}", prom_port, [
            {"job_name": name, "scheme": "https", "scrape_timeout": "1s", "tls_config": tls,
             **({"basic_auth": {"username": "prometheus", "password": PASSWORD}}
                if auth else {}),
             "static_configs": [{"targets": [f"127.0.0.1:{port}"]}]}
            for name, (tls, auth) in jobs.items()])
        try:
            def ups():
                res = api(prom_port, "/api/v1/query", query="up")["result"]
                got = {r["metric"]["job"]: r["value"][1] for r in res}
                return got if len(got) == 3 else None
            got = wait_for("three jobs scraped", ups, timeout=60)
            assert got == {"good": "1", "nopassword": "0", "nocert": "0"}, got
            series = wait_for("lockscope_target_up scraped over TLS", lambda: api(
                prom_port, "/api/v1/query", query='lockscope_target_up{job="good"}')["result"])
            assert series[0]["value"][1] == "1"
        finally:
            stop_prometheus(prom)

        # a renewed certificate is served from the next connection on, no restart
        old = _served_cert(port, pki)
        assert old == _der(pki.path("server.crt"))
        pki.renew_server()
        new = _der(pki.path("server.crt"))
        assert new != old
        wait_for("the renewed certificate served", lambda: _served_cert(port, pki) == new,
                 timeout=20)
        # a broken rewrite: the last good configuration stays, and a metric says so
        good_text = web.read_text()
        web.write_text("tls_server_config: [not, a, mapping\n")
        wait_for("the failed reload in the metrics", lambda: "lockscope_web_config_last_"
                 "reload_successful 0.0" in _get(port, pki)[2], timeout=20)
        web.write_text(good_text)

        # wrong passwords in a loop: the checks stay within their CPU bound, a scraper
        # that already authenticated is still served, and the recording goes on
        answers: dict[int, int] = {}
        stop = threading.Event()

        def flood():
            while not stop.is_set():
                try:
                    code = _get(port, pki, password=f"guess-{time.monotonic()}")[0]
                except OSError:
                    code = -1
                answers[code] = answers.get(code, 0) + 1

        t0 = time.monotonic()
        threads = [threading.Thread(target=flood) for _ in range(4)]
        for t in threads:
            t.start()
        time.sleep(4)
        scraped_during = _get(port, pki)[0]
        time.sleep(4)
        stop.set()
        for t in threads:
            t.join()
        elapsed = time.monotonic() - t0
        assert scraped_during == 200
        assert answers.get(429, 0) > 0, answers
        # each 401 is one bcrypt check: their CPU, at the cost of one check timed here,
        # stays within CPU_SHARE of a CPU over the flood (the first window starts full,
        # and 2x for a noisy machine); one check after another would take it all
        hashed = bcrypt.hashpw(b"x", bcrypt.gensalt(10))
        t = time.thread_time()
        bcrypt.checkpw(b"y", hashed)
        per_check = time.thread_time() - t
        spent = answers.get(401, 0) * per_check
        assert spent <= 2 * CPU_SHARE * (elapsed + WINDOW_S), (spent, per_check, answers)
        assert elapsed / per_check > 4 * answers.get(401, 0), (per_check, answers)
        assert proc.poll() is None, "".join(err)
        assert "Traceback" not in "".join(err)

