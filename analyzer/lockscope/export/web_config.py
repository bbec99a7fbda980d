"""``--web-config FILE``: TLS, client certificates and basic auth for the exporter, in the
format and with the meaning of the Prometheus exporter-toolkit's web configuration file
(the ``--web.config.file`` of node_exporter and Prometheus itself; docs/fleet.md).

``load_web_config`` reads the file and every file it names, and checks them all: a key
it does not know, a wrong type, a file that cannot be read, a certificate and key that
do not match, a hash that is not bcrypt's are each a UsageError naming the file and the
key. The result carries the PEM bytes themselves, so the exporter process (which runs
without privileges and may not be able to open the files) never reads the disk.
"""

from __future__ import annotations

import hashlib
import os
import ssl
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..errors import UsageError

# Go's tls.ClientAuthType names. RequestClientCert and RequireAnyClientCert accept any
# certificate without checking it: the toolkit's own documentation calls them insecure,
# and OpenSSL (under Python's ssl) has no mode that asks for a certificate and then
# ignores the verdict, so they are refused with the reason rather than served weaker.
CLIENT_AUTH = {"NoClientCert": ssl.CERT_NONE,
               "VerifyClientCertIfGiven": ssl.CERT_OPTIONAL,
               "RequireAndVerifyClientCert": ssl.CERT_REQUIRED}
INSECURE_CLIENT_AUTH = ("RequestClientCert", "RequireAnyClientCert")
TLS_VERSIONS = {"TLS10": ssl.TLSVersion.TLSv1, "TLS11": ssl.TLSVersion.TLSv1_1,
                "TLS12": ssl.TLSVersion.TLSv1_2, "TLS13": ssl.TLSVersion.TLSv1_3}
# Go's names of the TLS 1.2 suites crypto/tls.CipherSuites() lists as secure, and
# OpenSSL's names of the same suites (TLS 1.3 suites are not configurable in Go either)
GO_CIPHERS = {
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA": "ECDHE-ECDSA-AES128-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA": "ECDHE-ECDSA-AES256-SHA",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA": "ECDHE-RSA-AES128-SHA",
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA": "ECDHE-RSA-AES256-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256": "ECDHE-ECDSA-AES128-GCM-SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384": "ECDHE-ECDSA-AES256-GCM-SHA384",
    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256": "ECDHE-RSA-AES128-GCM-SHA256",
    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384": "ECDHE-RSA-AES256-GCM-SHA384",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-ECDSA-CHACHA20-POLY1305",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-RSA-CHACHA20-POLY1305",
}
# Go's curve names and OpenSSL's; Python's ssl sets one ECDH curve, so only a
# one-element list can be honoured exactly
GO_CURVES = {"CurveP256": "prime256v1", "CurveP384": "secp384r1",
             "CurveP521": "secp521r1", "X25519": "X25519"}
HEADERS = ("Content-Security-Policy", "X-Frame-Options", "X-Content-Type-Options",
           "X-XSS-Protection", "Strict-Transport-Security")
TLS_KEYS = {"cert", "key", "client_ca", "cert_file", "key_file", "client_auth_type",
            "client_ca_file", "client_allowed_sans", "min_version", "max_version",
            "cipher_suites", "prefer_server_cipher_suites", "curve_preferences"}
TOP_KEYS = {"tls_server_config", "http_server_config", "basic_auth_users", "rate_limit"}


@dataclass(frozen=True)
class TlsSettings:
    cert_pem: bytes
    key_pem: bytes
    client_ca_pem: bytes | None
    verify_mode: ssl.VerifyMode
    allowed_sans: tuple[str, ...]
    min_version: ssl.TLSVersion
    max_version: ssl.TLSVersion
    ciphers: str | None
    prefer_server_ciphers: bool
    curve: str | None


@dataclass(frozen=True)
class WebConfig:
    """One checked web configuration; ``digest`` tells two apart without comparing keys."""

    path: str
    tls: TlsSettings | None = None
    users: dict[str, bytes] = field(default_factory=dict)   # name -> bcrypt hash
    headers: tuple[tuple[str, str], ...] = ()
    rate_interval_s: float = 0.0
    rate_burst: int = 0
    digest: str = ""


def _err(path: str, where: str, what: str) -> UsageError:
    return UsageError(f"--web-config {path}: {where}: {what}")


def _read(path: str, where: str, name: str) -> bytes:
    # names relative to the web config file's own directory, as the toolkit resolves them
    full = Path(path).parent / name
    try:
        return full.read_bytes()
    except OSError as exc:
        raise _err(path, where, f"cannot read {full}: {exc.strerror or exc}") from None


def _mapping(path: str, where: str, value: Any, known: set[str]) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _err(path, where, "expected a mapping")
    for key in value:
        if key not in known:
            raise _err(path, where, f"unknown key {key!r} (known: {', '.join(sorted(known))})")
    return value


def _string(path: str, where: str, value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise _err(path, where, "expected a non-empty string")
    return value


def _strings(path: str, where: str, value: Any) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _err(path, where, "expected a list of strings")
    return list(value)


def _pem(path: str, tls: dict[str, Any], inline: str, file_key: str,
         required: bool) -> bytes | None:
    where = f"tls_server_config.{inline}"
    if inline in tls and file_key in tls:
        raise _err(path, where, f"give {inline} or {file_key}, not both")
    if inline in tls:
        return _string(path, where, tls[inline]).encode()
    if file_key in tls:
        return _read(path, f"tls_server_config.{file_key}",
                     _string(path, f"tls_server_config.{file_key}", tls[file_key]))
    if required:
        raise _err(path, "tls_server_config", f"{file_key} (or {inline}) is required")
    return None


def _tls(path: str, raw: Any) -> TlsSettings | None:
    tls = _mapping(path, "tls_server_config", raw, TLS_KEYS)
    if not tls:
        return None
    cert = _pem(path, tls, "cert", "cert_file", True) or b""
    key = _pem(path, tls, "key", "key_file", True) or b""
    ca = _pem(path, tls, "client_ca", "client_ca_file", False)
    auth = tls.get("client_auth_type", "NoClientCert")
    if auth in INSECURE_CLIENT_AUTH:
        raise _err(path, "tls_server_config.client_auth_type",
                   f"{auth} accepts certificates it does not verify: use "
                   "RequireAndVerifyClientCert (or VerifyClientCertIfGiven) with client_ca_file")
    if auth not in CLIENT_AUTH:
        raise _err(path, "tls_server_config.client_auth_type",
                   f"{auth!r} is not one of {', '.join(CLIENT_AUTH)}")
    if CLIENT_AUTH[auth] != ssl.CERT_NONE and ca is None:
        raise _err(path, "tls_server_config.client_ca_file", f"{auth} needs client_ca_file")
    sans = _strings(path, "tls_server_config.client_allowed_sans",
                    tls.get("client_allowed_sans"))
    if sans and auth != "RequireAndVerifyClientCert":
        raise _err(path, "tls_server_config.client_allowed_sans",
                   "needs client_auth_type RequireAndVerifyClientCert")
    versions = []
    for k, default in (("min_version", "TLS12"), ("max_version", "TLS13")):
        v = tls.get(k, default)
        if v not in TLS_VERSIONS:
            raise _err(path, f"tls_server_config.{k}",
                       f"{v!r} is not one of {', '.join(TLS_VERSIONS)}")
        versions.append(TLS_VERSIONS[v])
    if versions[0] > versions[1]:
        raise _err(path, "tls_server_config.min_version", "is above max_version")
    suites = _strings(path, "tls_server_config.cipher_suites", tls.get("cipher_suites"))
    for s in suites:
        if s not in GO_CIPHERS:
            raise _err(path, "tls_server_config.cipher_suites",
                       f"{s!r} is not a secure TLS 1.2 suite of Go's crypto/tls")
    curves = _strings(path, "tls_server_config.curve_preferences",
                      tls.get("curve_preferences"))
    for c in curves:
        if c not in GO_CURVES:
            raise _err(path, "tls_server_config.curve_preferences",
                       f"{c!r} is not one of {', '.join(GO_CURVES)}")
    if len(curves) > 1:
        raise _err(path, "tls_server_config.curve_preferences",
                   "give one curve: this server sets a single ECDH curve")
    prefer = tls.get("prefer_server_cipher_suites", True)
    if not isinstance(prefer, bool):
        raise _err(path, "tls_server_config.prefer_server_cipher_suites", "expected true/false")
    settings = TlsSettings(cert, key, ca, CLIENT_AUTH[auth], tuple(sans),
                           versions[0], versions[1],
                           ":".join(GO_CIPHERS[s] for s in suites) or None, prefer,
                           GO_CURVES[curves[0]] if curves else None)
    try:
        tls_context(settings)
    except ssl.SSLError as exc:
        raise _err(path, "tls_server_config",
                   f"the certificate, key or CA does not load: {exc.reason or exc}") from None
    _check_dates(path, cert)
    return settings


def _check_dates(path: str, cert_pem: bytes) -> None:
    """A server certificate outside its validity is refused: every client would refuse
    it, so serving it only hides the mistake."""
    with _pem_file(cert_pem) as name:
        try:
            # CPython's own certificate decoder (what getpeercert() returns, for a file)
            decoded = ssl._ssl._test_decode_cert(name)  # type: ignore[attr-defined]
        except (AttributeError, ssl.SSLError, ValueError):
            return
    now = time.time()
    after = ssl.cert_time_to_seconds(decoded["notAfter"])
    before = ssl.cert_time_to_seconds(decoded["notBefore"])
    if now > after:
        raise _err(path, "tls_server_config.cert_file",
                   f"the certificate expired on {decoded['notAfter']}")
    if now < before:
        raise _err(path, "tls_server_config.cert_file",
                   f"the certificate is not valid before {decoded['notBefore']}")


def _users(path: str, raw: Any) -> dict[str, bytes]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise _err(path, "basic_auth_users", "expected a mapping of user: bcrypt hash")
    users = {}
    for name, hashed in raw.items():
        where = f"basic_auth_users.{name}"
        if not isinstance(name, str) or not name or ":" in name:
            raise _err(path, "basic_auth_users", f"bad user name {name!r}")
        h = _string(path, where, hashed).encode()
        # $2a$, $2b$, $2y$ + two-digit cost + 53 characters of salt and hash
        if len(h) != 60 or h[:4] not in (b"$2a$", b"$2b$", b"$2y$") or not h[4:6].isdigit():
            raise _err(path, where, "not a bcrypt hash (make one with: htpasswd -nBC 10 '' "
                                    "| tr -d ':\\n')")
        users[name] = h
    return users


def _headers(path: str, raw: Any) -> tuple[tuple[str, str], ...]:
    http = _mapping(path, "http_server_config", raw, {"http2", "headers"})
    if "http2" in http and not isinstance(http["http2"], bool):
        raise _err(path, "http_server_config.http2", "expected true/false")
    headers = _mapping(path, "http_server_config.headers", http.get("headers"), set(HEADERS))
    out = []
    for k, v in headers.items():
        if v in (None, ""):
            continue
        value = _string(path, f"http_server_config.headers.{k}", v)
        if "\n" in value or "\r" in value:
            raise _err(path, f"http_server_config.headers.{k}", "a header is one line")
        out.append((k, value))
    return tuple(out)


def _duration_s(path: str, where: str, value: Any) -> float:
    """A Prometheus duration (``1s``, ``500ms``, ``1m``) or a number of seconds."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
        return float(value)
    units = (("ms", 0.001), ("s", 1.0), ("m", 60.0), ("h", 3600.0))
    if isinstance(value, str):
        for unit, scale in units:
            num = value[: -len(unit)]
            if value.endswith(unit) and num.replace(".", "", 1).isdigit():
                return float(num) * scale
    raise _err(path, where, f"{value!r} is not a duration (e.g. 100ms, 1s)")


def load_web_config(path: str) -> WebConfig:
    """Read and check ``path`` and the files it names; UsageError on anything wrong."""
    try:
        text = Path(path).read_bytes()
    except OSError as exc:
        raise UsageError(f"--web-config {path}: cannot read it: "
                         f"{exc.strerror or exc}") from None
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f"line {mark.line + 1}" if mark is not None else "YAML"
        raise UsageError(f"--web-config {path}: {at}: not valid YAML "
                         f"({getattr(exc, 'problem', None) or 'parse error'})") from None
    top = _mapping(path, "top level", raw, TOP_KEYS)
    rate = _mapping(path, "rate_limit", top.get("rate_limit"), {"interval", "burst"})
    burst = rate.get("burst", 0)
    if not isinstance(burst, int) or isinstance(burst, bool) or burst < 0:
        raise _err(path, "rate_limit.burst", "expected a whole number >= 0")
    interval = _duration_s(path, "rate_limit.interval", rate.get("interval", 0))
    cfg = WebConfig(path=path, tls=_tls(path, top.get("tls_server_config")),
                    users=_users(path, top.get("basic_auth_users")),
                    headers=_headers(path, top.get("http_server_config")),
                    rate_interval_s=interval, rate_burst=max(burst, 1) if interval else 0)
    digest = hashlib.sha256(repr((cfg.tls, sorted(cfg.users.items()), cfg.headers,
                                  interval, burst)).encode()).hexdigest()
    return WebConfig(**{**cfg.__dict__, "digest": digest})


def files_named(path: str) -> list[str]:
    """The config file and the files it names (what a change to re-read is looked for in);
    unreadable or malformed: just the file itself."""
    out = [path]
    try:
        tls = (yaml.safe_load(Path(path).read_bytes()) or {}).get("tls_server_config") or {}
        for k in ("cert_file", "key_file", "client_ca_file"):
            if isinstance(tls.get(k), str):
                out.append(str(Path(path).parent / tls[k]))
    except (OSError, yaml.YAMLError, AttributeError):
        pass
    return out


def tls_context(t: TlsSettings) -> ssl.SSLContext:
    """The server's SSLContext from PEM bytes. OpenSSL loads certificates from files
    only: the PEM goes to an anonymous memory file (memfd) read through /proc/self/fd,
    never to the disk."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version, ctx.maximum_version = t.min_version, t.max_version
    with _pem_file(t.cert_pem) as cert, _pem_file(t.key_pem) as key:
        ctx.load_cert_chain(cert, key)
    if t.client_ca_pem is not None:
        ctx.load_verify_locations(cadata=t.client_ca_pem.decode(errors="replace"))
    ctx.verify_mode = t.verify_mode
    if t.ciphers:
        ctx.set_ciphers(t.ciphers)
    if t.prefer_server_ciphers:
        ctx.options |= ssl.OP_CIPHER_SERVER_PREFERENCE
    if t.curve:
        ctx.set_ecdh_curve(t.curve)
    return ctx


class _pem_file:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.fd = -1

    def __enter__(self) -> str:
        try:
            self.fd = os.memfd_create("lockscope-pem", os.MFD_CLOEXEC)
        except (AttributeError, OSError):
            # no memfd: a private temporary file, unlinked at once after loading
            self.fd, name = tempfile.mkstemp(prefix="lockscope-pem-")
            os.unlink(name)
        view = memoryview(self.data)
        while view:
            view = view[os.write(self.fd, view):]
        return f"/proc/self/fd/{self.fd}"

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)
