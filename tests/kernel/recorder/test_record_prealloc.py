"""lockscope-record's hash maps are preallocated exactly where the kernel lacks BPF's own
allocator (struct bpf_mem_alloc, 6.1): before it, a tracing program using a hash map made
with BPF_F_NO_PREALLOC makes the verifier WARN (5.10 kernel/bpf/verifier.c,
check_map_prog_compatibility), which taints the kernel. The flags are read with bpftool
from the running recorder's maps, and the allocator is looked up with bpftool in the
kernel's BTF: neither goes through the recorder's own detection (session.c)."""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import time
from pathlib import Path

import pytest

from conftest import require_tool
from patience import patience
from record_common import recorder

pytestmark = pytest.mark.kernel

BPF_F_NO_PREALLOC = 1
HASH_TYPES = {"hash", "percpu_hash", "hash_of_maps"}
# large and written once per key: left to allocate on first use where the kernel can
LAZY = {"lock_stats", "offcpu", "dio_stats", "jbd2_handles"}


def kernel_has_bpf_allocator() -> bool:
    bpftool = require_tool("bpftool")
    res = subprocess.run([bpftool, "btf", "dump", "file", "/sys/kernel/btf/vmlinux"],
                         capture_output=True, text=True, timeout=patience(300), check=True)
    return "STRUCT 'bpf_mem_alloc'" in res.stdout


def recorder_maps(pid: int) -> dict[str, dict]:
    """The BPF maps the process holds, by name, as bpftool shows them (the map ids come
    from the process's fds: other recorders on the machine have maps of the same names)."""
    ids = set()
    fdinfo = Path(f"/proc/{pid}/fdinfo")
    for fd in fdinfo.iterdir():
        try:
            text = fd.read_text()
        except OSError:
            continue
        for line in text.splitlines():
            if line.startswith("map_id:"):
                ids.add(int(line.split()[1]))
    res = subprocess.run([require_tool("bpftool"), "map", "show", "-j"], capture_output=True,
                         text=True, timeout=patience(60), check=True)
    maps = {m["name"]: m for m in json.loads(res.stdout) if m["id"] in ids}
    assert LAZY <= set(maps), sorted(maps)
    return maps


def _churn(directory: str, i: int, until: float) -> None:
    n = 0
    while time.time() < until:
        path = os.path.join(directory, f"f{i}-{n % 64}")
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
        os.unlink(path)
        n += 1


def churn(directory: Path, seconds: float, procs: int = 4) -> None:
    """Processes creating and removing files in one directory: they wait on its i_rwsem."""
    until = time.time() + seconds
    fork = multiprocessing.get_context("fork")
    ps = [fork.Process(target=_churn, args=(str(directory), i, until)) for i in range(procs)]
    for p in ps:
        p.start()
    for p in ps:
        p.join(seconds + patience(30))


def record(tmp_path: Path) -> tuple[dict[str, dict], dict, str]:
    """One system-wide recording of a contended directory: (its maps while attached, the
    document, the recorder's stderr)."""
    work = tmp_path / "work"
    work.mkdir()
    with recorder([], tmp_path / "rec.json") as (proc, start, finish):
        maps = recorder_maps(proc.pid)
        start()
        churn(work, 2.0)
        doc = finish()
        err = proc.stderr.read()
    return maps, doc, err


def test_hash_maps_preallocated_exactly_without_bpf_allocator(tmp_path):
    lazy_ok = kernel_has_bpf_allocator()
    maps, doc, err = record(tmp_path)
    for name, m in maps.items():
        no_prealloc = bool(m["flags"] & BPF_F_NO_PREALLOC)
        if m["type"] in HASH_TYPES:
            assert no_prealloc == (lazy_ok and name in LAZY), (name, m, lazy_ok)
        elif m["type"] == "task_storage":
            assert no_prealloc, m   # the kernel creates task storage with the flag only
    assert ("hash maps preallocated" in err) == (not lazy_ok), err
    assert doc["threads"] and doc["offcpu"]


def test_forced_preallocation_records_the_same(tmp_path, monkeypatch):
    """LOCKSCOPE_FORCE_PREALLOC=1 takes the path of a kernel without the allocator (5.10)
    on this one: no hash map is made with BPF_F_NO_PREALLOC, and the recording still
    sees the waits."""
    monkeypatch.setenv("LOCKSCOPE_FORCE_PREALLOC", "1")
    maps, doc, err = record(tmp_path)
    hashes = {n: m for n, m in maps.items() if m["type"] in HASH_TYPES}
    assert LAZY <= set(hashes)
    assert not [n for n, m in hashes.items() if m["flags"] & BPF_F_NO_PREALLOC], hashes
    assert "hash maps preallocated: LOCKSCOPE_FORCE_PREALLOC is set" in err, err
    assert doc["threads"] and doc["offcpu"]
    assert doc["locks"], "no lock waits recorded from the contended directory"
