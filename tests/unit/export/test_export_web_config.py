"""--web-config files, read as the exporter-toolkit defines them: good ones load with the
meaning the toolkit gives each key; every malformed one is a one-line error naming the
file and the key; and the paths --redact-paths-outside keeps and hides."""

from __future__ import annotations

import json
import ssl
from pathlib import Path

import bcrypt
import pytest

from lockscope.errors import UsageError
from lockscope.export.path_redaction import PathRedactor
from lockscope.export.web_config import load_web_config

from tls_certs import Pki

HASH = bcrypt.hashpw(b"pw", bcrypt.gensalt(4)).decode()


@pytest.fixture(scope="module")
def pki(tmp_path_factory) -> Pki:
    return Pki.make(tmp_path_factory.mktemp("pki"))


def _write(pki: Pki, text: str, name: str = "web.yml") -> str:
    path = pki.dir / name
    path.write_text(text)
    return str(path)


TLS = "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"


def test_a_full_file_has_the_toolkit_meaning(pki):
    cfg = load_web_config(_write(pki, TLS + """\
  client_auth_type: RequireAndVerifyClientCert
  client_ca_file: ca.crt
  client_allowed_sans: [scraper.example]
  min_version: TLS13
  cipher_suites: [TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256]
  curve_preferences: [CurveP256]
http_server_config:
  http2: false
  headers:
    X-Content-Type-Options: nosniff
    Strict-Transport-Security: ""
basic_auth_users:
  prometheus: 'HASH'
rate_limit:
  interval: 100ms
  burst: 5
""".replace("HASH", HASH)))
    assert cfg.tls is not None
    assert cfg.tls.verify_mode == ssl.CERT_REQUIRED
    assert cfg.tls.min_version == ssl.TLSVersion.TLSv1_3
    assert cfg.tls.allowed_sans == ("scraper.example",)
    assert cfg.tls.cert_pem == pki.path("server.crt").read_bytes()
    assert cfg.headers == (("X-Content-Type-Options", "nosniff"),)   # blank: unset
    assert cfg.users == {"prometheus": HASH.encode()}
    assert (cfg.rate_interval_s, cfg.rate_burst) == (0.1, 5)


def test_defaults_and_an_empty_file(pki):
    cfg = load_web_config(_write(pki, TLS))
    assert cfg.tls is not None and cfg.tls.verify_mode == ssl.CERT_NONE
    assert cfg.tls.min_version == ssl.TLSVersion.TLSv1_2     # the toolkit's default
    assert cfg.users == {} and cfg.rate_interval_s == 0
    empty = load_web_config(_write(pki, ""))
    assert empty.tls is None and empty.users == {}            # plain HTTP, no auth
    # the file's identity changes with what it says, not with when it was read
    assert load_web_config(_write(pki, TLS)).digest == cfg.digest


@pytest.mark.parametrize("text, words", [
    ("tls_server_config: [1, 2]\n", "tls_server_config: expected a mapping"),
    ("tls_server_confg: {}\n", "top level: unknown key 'tls_server_confg'"),
    (TLS + "  client_auth: x\n", "tls_server_config: unknown key 'client_auth'"),
    ("tls_server_config:\n  cert_file: server.crt\n", "key_file (or key) is required"),
    (TLS.replace("server.key", "nowhere.key"), "cannot read"),
    (TLS.replace("server.key", "client.key"), "does not load"),
    (TLS + "  client_auth_type: RequireAnyClientCert\n", "accepts certificates it does not"),
    (TLS + "  client_auth_type: Sometimes\n", "'Sometimes' is not one of"),
    (TLS + "  client_auth_type: RequireAndVerifyClientCert\n", "needs client_ca_file"),
    (TLS + "  min_version: TLS14\n", "tls_server_config.min_version"),
    (TLS + "  min_version: TLS13\n  max_version: TLS12\n", "above max_version"),
    (TLS + "  cipher_suites: [TLS_RSA_WITH_RC4_128_SHA]\n", "not a secure TLS 1.2 suite"),
    (TLS + "  curve_preferences: [CurveP256, X25519]\n", "give one curve"),
    (TLS + "  client_allowed_sans: [a]\n", "needs client_auth_type"),
    ("basic_auth_users:\n  prom: plaintext\n", "basic_auth_users.prom: not a bcrypt hash"),
    ("basic_auth_users: [prom]\n", "expected a mapping of user"),
    ("http_server_config:\n  headers:\n    X-Evil: 1\n", "unknown key 'X-Evil'"),
    ("http_server_config:\n  http2: maybe\n", "http2: expected true/false"),
    ("rate_limit:\n  interval: soon\n", "rate_limit.interval"),
    ("rate_limit:\n  burst: -1\n", "rate_limit.burst"),
    ("tls_server_config: {cert_file: [\n", "not valid YAML"),
])
def test_a_malformed_file_is_one_line_naming_the_key(pki, text, words):
    path = _write(pki, text, "bad.yml")
    with pytest.raises(UsageError) as exc:
        load_web_config(path)
    msg = str(exc.value)
    assert msg.startswith(f"--web-config {path}: ") and "\n" not in msg
    assert words in msg, msg


def test_an_expired_certificate_is_refused(tmp_path):
    pki = Pki.make(tmp_path / "pki")
    pki.expire_server()
    with pytest.raises(UsageError, match="the certificate expired on"):
        load_web_config(_write(pki, TLS))


def test_a_missing_file_is_one_line(tmp_path):
    with pytest.raises(UsageError, match="cannot read it: No such file"):
        load_web_config(str(tmp_path / "nope.yml"))


def test_paths_outside_the_served_directories_are_redacted(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    redact = PathRedactor([str(data)])
    interval = {"locks": [{"path": str(data / "ib_logfile0"), "dev": "7:1", "ino": 12},
                          {"path": "/home/alice/secret.db", "dev": "8:1", "ino": 99},
                          {"path": None, "ino": None}],
                "files": [{"path": "/etc/shadow"}]}
    out = redact(interval)
    assert out["locks"][0]["path"] == str(data / "ib_logfile0")
    assert out["locks"][1]["path"] == "[redacted dev 8:1 ino 99]"
    assert out["locks"][2]["path"] is None
    assert out["files"][0]["path"] == "[redacted]"
    assert "alice" not in json.dumps(out)
    assert interval["locks"][1]["path"] == "/home/alice/secret.db"    # the input is kept
    # a directory whose name only starts like the kept one is outside it
    assert not redact.keeps(str(data) + "-old/x")
    assert redact.keys({str(data / "a"): "redo_log", "/srv/b": "wal"}) == \
        {str(data / "a"): "redo_log"}
    assert PathRedactor([])(interval) is interval


def test_the_example_in_the_docs_loads(tmp_path):
    """docs/fleet.md's web configuration, with this test's certificates in place."""
    doc = (Path(__file__).resolve().parents[3] / "docs" / "fleet.md").read_text()
    block = doc.split("```yaml\n# /etc/lockscope/web.yml")[1].split("```")[0]
    pki = Pki.make(tmp_path / "pki")
    text = block.replace("/etc/lockscope/", "").replace(
        "$2y$10$REPLACE.WITH.YOUR.OWN.BCRYPT.HASH.FROM.htpasswd.nBC.10.xxxxxx", HASH)
    cfg = load_web_config(_write(pki, text))
    assert cfg.tls is not None and cfg.users
