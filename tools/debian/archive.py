"""Where this machine gets Debian's packages from: the archive and security URIs read from
its own apt configuration (deb822 `*.sources` and one-line `*.list`), so that private apt
roots and release root filesystems use the same mirror as the host. Nothing here names a
host: a fleet with its own mirror has it in its apt sources already."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

APT_ETC = Path("/etc/apt")
KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"
# Debian's code names this project builds roots of or fetches kernels from
CODENAMES = ("bullseye", "bookworm", "trixie", "forky", "sid")
_ARCHIVE_SUITE = re.compile(rf"^({'|'.join(CODENAMES)})(-updates|-backports)?$")
_SECURITY_SUITE = re.compile(rf"^({'|'.join(CODENAMES)})(-security|/updates)$")


class ArchiveError(RuntimeError):
    """The machine's apt sources name no Debian archive."""


@dataclass(frozen=True)
class Archive:
    uri: str            # the archive: SUITE, SUITE-updates, SUITE-backports
    security: str       # the security archive: SUITE-security
    keyring: str

    def sources(self, suite: str, components: str = "main", updates: bool = True,
                backports: bool = False) -> list[str]:
        """One-line apt sources (without `deb`) for one Debian release."""
        lines = [f"{self.uri} {suite} {components}"]
        if updates:
            lines.append(f"{self.uri} {suite}-updates {components}")
            lines.append(f"{self.security} {suite}-security {components}")
        if backports:
            lines.append(f"{self.uri} {suite}-backports {components}")
        return lines


def _entries(etc: Path) -> list[tuple[str, list[str], str | None]]:
    """(uri, suites, signed-by) of every enabled `deb` entry."""
    out: list[tuple[str, list[str], str | None]] = []
    for f in sorted((etc / "sources.list.d").glob("*.sources")):
        for para in re.split(r"\n\s*\n", f.read_text()):
            fields: dict[str, str] = {}
            for line in para.splitlines():
                if line.startswith("#") or ":" not in line or line[:1].isspace():
                    continue
                key, _, value = line.partition(":")
                fields[key.strip().lower()] = value.strip()
            if "deb" not in fields.get("types", "").split() or \
                    fields.get("enabled", "yes").lower() == "no":
                continue
            for uri in fields.get("uris", "").split():
                out.append((uri, fields.get("suites", "").split(), fields.get("signed-by")))
    lists = [etc / "sources.list", *sorted((etc / "sources.list.d").glob("*.list"))]
    for f in lists:
        if not f.is_file():
            continue
        for line in f.read_text().splitlines():
            line = line.split("#", 1)[0].strip()
            m = re.match(r"^deb\s+(\[(?P<opts>[^\]]*)\]\s+)?(?P<uri>\S+)\s+(?P<suite>\S+)", line)
            if not m:
                continue
            signed = re.search(r"signed-by=(\S+)", m.group("opts") or "")
            out.append((m.group("uri"), [m.group("suite")], signed.group(1) if signed else None))
    return out


def archive(etc: Path = APT_ETC) -> Archive:
    """The Debian archive and security archive this machine's apt uses."""
    uri = security = None
    keyring = KEYRING
    for entry_uri, suites, signed in _entries(etc):
        for s in suites:
            if uri is None and _ARCHIVE_SUITE.match(s):
                uri = entry_uri.rstrip("/")
                keyring = signed or keyring
            elif security is None and _SECURITY_SUITE.match(s):
                security = entry_uri.rstrip("/")
    if uri is None:
        raise ArchiveError(f"no Debian archive in {etc}/sources.list*: an entry with a suite "
                           f"such as bookworm or bookworm-updates is needed")
    if security is None:    # a mirror that carries both under one URI
        security = uri + "-security" if uri.endswith("/debian") else uri
    return Archive(uri, security, keyring)
