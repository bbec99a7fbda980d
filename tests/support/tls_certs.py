"""Certificates for the exporter's TLS tests, made by the openssl command: a CA, a
server certificate for 127.0.0.1/localhost signed by it, a client certificate signed by
it, and one signed by another CA; each ``Pki`` lives in its own directory."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def _ca(d: Path, name: str) -> None:
    _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
             "-nodes", "-days", "2", "-subj", f"/CN={name}", "-keyout", f"{name}.key",
             "-out", f"{name}.crt", cwd=d)


def _signed(d: Path, name: str, ca: str, san: str, days: int = 2) -> None:
    _openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-subj", f"/CN={name}", "-keyout", f"{name}.key", "-out", f"{name}.csr", cwd=d)
    (d / f"{name}.ext").write_text(f"subjectAltName={san}\n")
    args = ["x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.crt", "-CAkey", f"{ca}.key",
            "-CAcreateserial", "-out", f"{name}.crt", "-extfile", f"{name}.ext",
            # days -1: a certificate that expired a day ago (OpenSSL 3.0 has no -not_after)
            "-days", str(days)]
    _openssl(*args, cwd=d)


@dataclass
class Pki:
    dir: Path

    def path(self, name: str) -> Path:
        return self.dir / name

    @classmethod
    def make(cls, d: Path) -> Pki:
        d.mkdir(parents=True, exist_ok=True)
        _ca(d, "ca")
        _ca(d, "other-ca")
        _signed(d, "server", "ca", "IP:127.0.0.1,DNS:localhost")
        _signed(d, "client", "ca", "DNS:scraper.example")
        _signed(d, "stranger", "other-ca", "DNS:scraper.example")
        return cls(d)

    def renew_server(self) -> None:
        """A new server certificate and key in place of the old (a rotation)."""
        _signed(self.dir, "server", "ca", "IP:127.0.0.1,DNS:localhost")

    def expire_server(self) -> None:
        _signed(self.dir, "server", "ca", "IP:127.0.0.1,DNS:localhost", days=-1)
