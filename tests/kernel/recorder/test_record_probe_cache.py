"""The recorder keeps what the kernel answered when it tried probe groups' attach kinds
(bpf/recorder/attach/probe_cache.c): a second start on the same boot loads the BPF object
once, whatever the first had to try, and lists the same groups with the same reasons. A
cache it cannot trust (another key, writable by others) is not used. Loads are counted
from libbpf's own log (--verbose), not from the cache."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import require_kernel
from patience import patience
from record_common import record_binary

pytestmark = pytest.mark.kernel


def _list(cache: Path | str) -> tuple[dict, int]:
    """--list-features with the cache in `cache`: its groups, and how many times the
    BPF object was opened (each trial of a kind alone, each reload, the real load)."""
    res = subprocess.run([record_binary(), "--list-features", "--verbose"],
                         capture_output=True, text=True, timeout=patience(300),
                         env=dict(os.environ, LOCKSCOPE_PROBE_CACHE_DIR=str(cache)))
    assert res.returncode == 0, res.stderr[-2000:]
    groups = {g["name"]: (g["enabled"], g.get("attach"), g.get("reason"))
              for g in json.loads(res.stdout)["groups"]}
    return groups, res.stderr.count("loading object")


def test_a_second_start_loads_once_and_lists_the_same(tmp_path):
    require_kernel()
    cache = tmp_path / "cache"
    first, opened = _list(cache)
    assert opened >= 1
    files = list(cache.iterdir())
    assert len(files) == 1 and files[0].stat().st_mode & 0o777 == 0o600
    again, reopened = _list(cache)
    assert again == first
    assert reopened == 1, f"{opened} opens at the first start, {reopened} at the second"


def test_a_cache_of_another_key_or_open_to_others_is_not_used(tmp_path):
    require_kernel()
    cache = tmp_path / "cache"
    first, opened = _list(cache)
    (path,) = cache.iterdir()
    lines = path.read_text().splitlines()
    # every answer claimed refused: were it read, every group it names would be off
    lies = [" ".join(line.split()[:2]) + " 22 a lie" for line in lines[1:]]
    path.write_text("lockscope-probe-cache 1 another-boot\n" + "\n".join(lies) + "\n")
    assert _list(cache) == (first, opened)          # replaced by the true answers
    path.write_text(lines[0] + "\n" + "\n".join(lies) + "\n")
    path.chmod(0o666)
    assert _list(cache)[0] == first


def test_off_keeps_nothing(tmp_path):
    require_kernel()
    first, opened = _list("off")
    assert _list("off") == (first, opened)
    assert not list(tmp_path.iterdir())
