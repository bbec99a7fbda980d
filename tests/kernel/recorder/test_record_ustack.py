"""User stacks through code built without frame pointers (bpf/recorder/kern/ustack.bpf.inc +
unwind.c): the recorder copies the stack, the unwinder walks it with the
binaries' CFI.

Expected chains come from the programs the tests build (their call chain and
the symbols nm lists) and from the server binary's own symbol table.
"""

from __future__ import annotations

import json
import os
import platform
import re
import subprocess
import time
from pathlib import Path

import pytest

from lockscope.analysis.userwait import IDLE, USER_LOCK, classify

from conftest import require_tool
from dbservers import MariaDB, mariadbd_binary
from patience import patience
from record_common import record_binary

CHAIN_SRC = r"""
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t cmu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int pfd[2];
static int mode;
static volatile int sink;

/* blocks: 0 on a contended mutex, 1 on a condition variable, 2 on a pipe */
__attribute__((noinline)) void c(void)
{
	char ch;

	if (mode == 0) {
		pthread_mutex_lock(&mu);
		pthread_mutex_unlock(&mu);
	} else if (mode == 1) {
		pthread_mutex_lock(&cmu);
		pthread_cond_wait(&cv, &cmu);
		pthread_mutex_unlock(&cmu);
	} else if (read(pfd[0], &ch, 1) < 0) {
		sink = 1;
	}
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void b(void) { c(); sink++; }
__attribute__((noinline)) void a(void) { b(); sink++; }

/* the other side: holds the mutex, signals the condition, writes the pipe */
static void *helper(void *arg)
{
	for (;;) {
		usleep(20000);
		if (mode == 0) {
			pthread_mutex_lock(&mu);
			usleep(20000);
			pthread_mutex_unlock(&mu);
		} else if (mode == 1) {
			/* cmu released: the woken waiter never blocks on it */
			pthread_cond_signal(&cv);
		} else if (write(pfd[1], "x", 1) < 0) {
			exit(1);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	mode = atoi(argv[1]);
	if (pipe(pfd) || pthread_create(&t, NULL, helper, NULL))
		return 1;
	printf("ready\n");
	fflush(stdout);
	for (;;)
		a();
}
"""

MODES = {0: "mutex", 1: "condvar", 2: "pipe"}


def fp_setup_re() -> re.Pattern:
    """The instruction that makes a frame pointer, per architecture."""
    arch = platform.machine()
    if arch == "x86_64":
        return re.compile(r"mov\s+%rsp,%rbp")
    if arch == "aarch64":
        return re.compile(r"mov\s+x29,\s*sp")
    pytest.skip(f"no frame-pointer pattern known for {arch}")


def function_disassembly(exe: Path, name: str) -> str:
    out = subprocess.run([require_tool("objdump"), "-d", f"--disassemble={name}", str(exe)],
                         capture_output=True, text=True, check=True).stdout
    body = out.split(f"<{name}>:", 1)[1]
    assert body.strip(), f"{name} not disassembled"
    return body


def build_chain(tmp_path: Path) -> Path:
    gcc = require_tool("gcc")
    src = tmp_path / "chain.c"
    src.write_text(CHAIN_SRC)
    exe = tmp_path / "chain"
    subprocess.run([gcc, "-O2", "-fomit-frame-pointer", "-pthread", "-o", str(exe), str(src)],
                   check=True)
    pattern = fp_setup_re()
    for fn in ("a", "b", "c"):
        assert not pattern.search(function_disassembly(exe, fn)), f"{fn} sets up a frame pointer"
    return exe


def chain_at(stack: list[str], names: list[str]) -> bool:
    """names (leaf first) appear as consecutive frames of stack."""
    fns = [f.rsplit("+0x", 1)[0] for f in stack]
    return any(fns[i:i + len(names)] == names for i in range(len(fns)))


@pytest.mark.kernel
def test_chain_without_frame_pointers_is_unwound(tmp_path):
    exe = build_chain(tmp_path)
    procs = {}
    try:
        for mode in MODES:
            p = subprocess.Popen([str(exe), str(mode)], stdout=subprocess.PIPE, text=True)
            procs[mode] = p
            assert p.stdout.readline().startswith("ready")
        out = tmp_path / "rec.json"
        subprocess.run([record_binary(), "--max-overhead", "0",
                        "--pid", ",".join(str(p.pid) for p in procs.values()),
                        "--duration", "2", "--out", str(out)], check=True, timeout=patience(60))
    finally:
        for p in procs.values():
            p.kill()
            p.wait()
    doc = json.loads(out.read_text())
    assert doc["counts"]["user_stacks_copied"] > 0
    assert doc["counts"]["user_stacks_unwound"] == doc["counts"]["user_stacks_copied"]
    for mode, p in procs.items():
        # the main thread's waits: the longest carrying the chain main -> a -> b -> c
        # (a preemption on a loaded host is a run-queue wait, not the thread's own)
        mine = [r for r in doc["offcpu"] if r["tid"] == p.pid and r["reason"] != "runqueue"
                and chain_at(r["ustack"] or [], ["c", "b", "a", "main"])]
        assert mine, f"{MODES[mode]}: no off-CPU record with c <- b <- a <- main"
        top = max(mine, key=lambda r: r["total_ns"])
        kernel = " ".join(top["kstack"])
        if mode == 2:
            assert "pipe_read" in kernel
            assert function_at_leaf(top["ustack"], "read")
        else:
            assert "futex" in kernel
            wait = classify(top["ustack"], top["kstack"])
            assert wait is not None
            assert wait.kind == (USER_LOCK if mode == 0 else IDLE), (MODES[mode], wait)


def function_at_leaf(stack: list[str], name: str) -> bool:
    """name (or a libc alias such as __libc_read) among the frames below c."""
    fns = [f.rsplit("+0x", 1)[0] for f in stack]
    return any(fn.lstrip("_").endswith(name) for fn in fns[:fns.index("c")])


# ---- a real server: Debian's mariadbd, built without frame pointers ----------

def named(frame: str) -> bool:
    return not frame.startswith("[")


def server_functions(binary: str) -> set[str]:
    """Function names defined in the server's own dynamic symbol table, demangled
    by binutils, without parameter lists."""
    out = subprocess.run([require_tool("nm"), "-DC", "--defined-only", binary],
                         capture_output=True, text=True, check=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split(maxsplit=2)
        if len(parts) == 3 and parts[1] in "TtWw":
            names.add(re.sub(r"\(.*$", "", parts[2]).split("@")[0])
    return names


@pytest.mark.kernel
def test_mariadb_futex_waits_have_named_user_stacks(loopfs_factory):
    server = mariadbd_binary() or require_tool("mariadbd")
    require_tool("sysbench")
    fs = loopfs_factory("ext4", 2 << 30)
    os.chmod(fs.path.parent, 0o711)  # the server's user must reach the mount
    out = fs.path / "rec.json"
    with MariaDB(fs.path / "mariadb", slowness=patience(1)) as db:
        db.sql("CREATE DATABASE sbtest")
        db.sysbench("prepare", "--tables=2", "--table-size=10000")
        # no budget: a busy server would have its user stacks shed (--max-overhead)
        rec = subprocess.Popen([record_binary(), "--max-overhead", "0", "--pid", str(db.pid),
                                "--duration", "6", "--out", str(out)])
        try:
            time.sleep(1)
            db.sysbench("run", "--threads=8", "--time=4")
        finally:
            rec.wait(timeout=patience(60))
    assert rec.returncode == 0
    doc = json.loads(out.read_text())
    futex = [r for r in doc["offcpu"]
             if r["pid"] == db.pid and any("futex" in f for f in r["kstack"])]
    total = sum(r["total_ns"] for r in futex)
    assert total > 0
    full = [r for r in futex if sum(map(named, r["ustack"] or [])) >= 4]
    share = sum(r["total_ns"] for r in full) / total
    print(f"mariadbd futex off-CPU time with >= 4 named user frames: {share:.1%} "
          f"of {total / 1e9:.1f} s")
    assert share >= 0.8
    own = server_functions(server)
    in_server = {f.rsplit("+0x", 1)[0] for r in full for f in r["ustack"]} & own
    assert in_server, "no named frame is a function of mariadbd"
