"""``--listen [HOST:]PORT``: where the exporter serves. The host defaults to 127.0.0.1
(loopback only: another address only when given); IPv6 hosts are written in brackets
(``[::1]:9433``). A bad value is a UsageError (one line, exit status 2)."""

from __future__ import annotations

import socket
from dataclasses import dataclass

from ..errors import UsageError

DEFAULT_HOST = "127.0.0.1"


@dataclass(frozen=True)
class ListenAddress:
    host: str
    port: int
    family: int

    def __str__(self) -> str:
        return f"[{self.host}]:{self.port}" if self.family == socket.AF_INET6 \
            else f"{self.host}:{self.port}"


def parse_listen(text: str) -> ListenAddress:
    """``HOST:PORT``, ``[V6]:PORT``, ``:PORT`` or ``PORT``; the host must resolve to a
    numeric address here (a name is resolved once, now)."""
    raw = (text or "").strip()
    if not raw:
        raise UsageError("--listen: empty address (expected [HOST:]PORT)")
    if raw.startswith("["):
        host, sep, port_s = raw[1:].partition("]:")
        if not sep:
            raise UsageError(f"--listen {text}: expected [IPV6]:PORT")
    elif ":" in raw:
        host, _, port_s = raw.rpartition(":")
        if ":" in host:
            raise UsageError(f"--listen {text}: write an IPv6 host in brackets, "
                             "e.g. [::1]:9433")
    else:
        host, port_s = "", raw
    host = host or DEFAULT_HOST
    if not port_s.isdigit() or not 0 <= int(port_s) <= 65535:
        raise UsageError(f"--listen {text}: port {port_s!r} is not a number 0-65535")
    try:
        infos = socket.getaddrinfo(host, int(port_s), type=socket.SOCK_STREAM,
                                   flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as e:
        raise UsageError(f"--listen {text}: cannot resolve host {host!r} ({e})") from None
    family, _, _, _, sockaddr = infos[0]
    return ListenAddress(str(sockaddr[0]), int(port_s), family)
