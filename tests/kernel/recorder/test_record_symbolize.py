"""The recorder's symbolizer and inode -> path resolution, through lockscope-symtest.

Expected values come from outside the library: /proc/kallsyms, nm on the ELF
files, /proc/PID/maps of a child we start, and os.stat.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from conftest import require_tool
from patience import patience

ROOT = Path(__file__).resolve().parents[3]
# LOCKSCOPE_SYMTEST runs the tests against another build (e.g. with sanitizers).
SYMTEST = Path(os.environ.get("LOCKSCOPE_SYMTEST", ROOT / "build" / "bin" / "lockscope-symtest"))
UNKNOWN = "[unknown]"

CHILD_SRC = r"""
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

/* Big enough (more than 0x10 bytes) to hold the offsets the tests probe. */
__attribute__((noinline)) int lockscope_target_fn(int x)
{
	volatile int v = x;

	for (int i = 0; i < 8; i++)
		v = v * 3 + i;
	return v;
}

/* Holds argv[1] open, says ready, and lives until stdin closes. */
int main(int argc, char **argv)
{
	int fd = argc > 1 ? open(argv[1], O_RDONLY) : -1;
	char c;

	printf("ready %d %d\n", lockscope_target_fn(argc), fd);
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	return 0;
}
"""


# ---- helpers ------------------------------------------------------------

@pytest.fixture(scope="module")
def symtest() -> str:
    """Builds only our driver, so a half-written tool elsewhere in bpf/ cannot block it."""
    if "LOCKSCOPE_SYMTEST" in os.environ:
        return str(SYMTEST)
    res = subprocess.run(["make", "-s", "-C", str(ROOT / "bpf"), str(SYMTEST)],
                         capture_output=True, text=True)
    if res.returncode:
        pytest.fail("building lockscope-symtest failed:\n" + res.stdout + res.stderr)
    return str(SYMTEST)


def run(symtest: str, *args, ok: bool = True) -> subprocess.CompletedProcess:
    res = subprocess.run([symtest, *map(str, args)], capture_output=True, text=True,
                         timeout=patience(60))
    if ok:
        assert res.returncode == 0, res.stderr
    return res


def lines(symtest: str, *args) -> list[str]:
    return run(symtest, *args).stdout.splitlines()


def kallsyms() -> list[tuple[int, str, str]]:
    out = []
    with open("/proc/kallsyms") as f:
        for line in f:
            parts = line.split()
            out.append((int(parts[0], 16), parts[1], parts[2]))
    return out


def nm_symbols(path: str, dynamic: bool = False) -> dict[str, list[int]]:
    """Defined symbols of an ELF file as name -> addresses (version suffixes dropped)."""
    args = ["nm", "--defined-only"] + (["-D"] if dynamic else []) + [path]
    out: dict[str, list[int]] = {}
    listing = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    for line in listing.splitlines():
        parts = line.split()
        if len(parts) == 3:
            out.setdefault(parts[2].split("@")[0], []).append(int(parts[0], 16))
    return out


def fn_size(path: Path, name: str) -> int:
    out = subprocess.run(["nm", "-S", "--defined-only", str(path)], capture_output=True,
                         text=True, check=True).stdout
    size = next(int(p[1], 16) for p in map(str.split, out.splitlines())
                if len(p) == 4 and p[3] == name)
    assert size > 0x10
    return size


def mappings(pid: int) -> list[dict]:
    out = []
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            parts = line.split(maxsplit=5)
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            out.append({"start": lo, "end": hi, "perms": parts[1], "off": int(parts[2], 16),
                        "path": parts[5].strip() if len(parts) > 5 else ""})
    return out


def load_base(pid: int, needle: str) -> tuple[int, str]:
    """Start of the offset-0 mapping of the file whose path contains needle, and that path."""
    for m in mappings(pid):
        if needle in m["path"] and m["off"] == 0:
            return m["start"], m["path"]
    raise AssertionError(f"{needle} not mapped in {pid}")


def is_pie(path: str) -> bool:
    with open(path, "rb") as f:
        head = f.read(18)
    return int.from_bytes(head[16:18], "little") == 3  # ET_DYN


def compile_child(tmp_path: Path, name: str, *flags: str) -> Path:
    require_tool("gcc")
    src = tmp_path / "child.c"
    src.write_text(CHILD_SRC)
    exe = tmp_path / name
    subprocess.run(["gcc", "-O1", *flags, "-o", str(exe), str(src)], check=True)
    return exe


class Child:
    """A running child program, ended by closing its stdin."""

    def __init__(self, exe: Path, *args: str):
        self.proc = subprocess.Popen([str(exe), *args], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        self.ready = self.proc.stdout.readline()
        assert self.ready.startswith("ready"), self.ready
        self.pid = self.proc.pid

    def end(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(timeout=patience(10))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.end()
        self.proc.stdout.close()


def runtime_addr(pid: int, exe: Path, vaddr: int) -> int:
    """Where ELF address vaddr of exe lives in pid: shifted by the load base unless non-PIE."""
    base, _ = load_base(pid, str(exe))
    return base + vaddr if is_pie(str(exe)) else vaddr


# ---- kernel symbols -----------------------------------------------------

@pytest.mark.kernel
def test_kernel_text_address_gives_function_and_offset(symtest):
    syms = kallsyms()
    vfs_write = next(a for a, t, n in syms if n == "vfs_write" and t in "tT")
    assert lines(symtest, "ksym", hex(vfs_write + 0x10), hex(vfs_write)) == [
        "vfs_write+0x10", "vfs_write+0x0"]
    # A sample of global functions that share their address with no other symbol.
    count: dict[int, int] = {}
    for a, _, _ in syms:
        count[a] = count.get(a, 0) + 1
    sample = [(a, n) for a, t, n in syms if t == "T" and count[a] == 1 and a + 1 not in count]
    sample = sample[:: max(1, len(sample) // 300)]
    got = lines(symtest, "ksym", *(hex(a + 1) for a, _ in sample))
    assert got == [f"{n}+0x1" for _, n in sample]


@pytest.mark.kernel
def test_kernel_unresolvable_address_is_unknown(symtest):
    assert lines(symtest, "ksym", "0x10", "0xffffffffffffff00") == [UNKNOWN, UNKNOWN]


@pytest.mark.kernel
def test_kernel_data_symbol_resolves_by_name(symtest):
    syms = kallsyms()
    data = [(a, n) for a, t, n in syms if t in "dDbBrR"]
    if not data:
        pytest.fail("no data symbols in /proc/kallsyms")
    names_at: dict[int, set[str]] = {}
    for a, _t, n in syms:
        names_at.setdefault(a, set()).add(n)
    addr, _ = data[len(data) // 2]
    # Exact address: one of the data symbols there (aliases share addresses).
    [got] = lines(symtest, "kdata", hex(addr))
    assert got in {n for a, n in data if a == addr}
    # A text address is not data.
    vfs_write = next(a for a, t, n in syms if n == "vfs_write")
    assert lines(symtest, "kdata", hex(vfs_write + 0x10)) == ["-"]
    # Inside an object: "sym+0xoff". Only kernels with CONFIG_KALLSYMS_ALL list
    # objects; section markers (__start_*, __stop_*) never match inexactly.
    objects = [(a, n) for a, n in data
               if not n.startswith(("__start_", "__stop_")) and len(names_at[a]) == 1
               and not any(a < b <= a + 8 for b in names_at if b != a)]
    for a, n in objects[:50]:
        assert lines(symtest, "kdata", hex(a + 8)) == [f"{n}+0x8"]
    for a, n in data:
        if n.startswith("__start_") and not any(a < b <= a + 0x10 for b in names_at):
            assert lines(symtest, "kdata", hex(a + 0x10)) == ["-"]
            break


@pytest.mark.kernel
def test_kernel_global_lock_name_when_listed(symtest):
    found = [(a, t) for a, t, n in kallsyms() if n == "inode_hash_lock"]
    if not found:
        return  # kernel without CONFIG_KALLSYMS_ALL: covered by the marker test above
    assert lines(symtest, "kdata", hex(found[0][0])) == ["inode_hash_lock"]


@pytest.mark.kernel
def test_bench_reports_fast_lookups(symtest):
    stats = dict(line.split() for line in lines(symtest, "bench"))
    assert float(stats["ksyms_load_ms"]) < 2000
    assert float(stats["ksyms_format_per_s"]) > 200_000
    assert float(stats["usyms_format_per_s"]) > 200_000


# ---- user symbols -------------------------------------------------------

@pytest.mark.parametrize("flags", [("-fPIE", "-pie"), ("-fno-pie", "-no-pie")],
                         ids=["pie", "no-pie"])
def test_user_function_in_executable(symtest, tmp_path, flags):
    exe = compile_child(tmp_path, "child", *flags)
    assert is_pie(str(exe)) == (flags[1] == "-pie")
    [fn] = nm_symbols(str(exe))["lockscope_target_fn"]
    size = fn_size(exe, "lockscope_target_fn")
    with Child(exe) as child:
        addr = runtime_addr(child.pid, exe, fn)
        got = lines(symtest, "usym", child.pid, hex(addr), hex(addr + 5), hex(addr + size - 1),
                    hex(addr + size))
    assert got[:3] == ["lockscope_target_fn+0x0", "lockscope_target_fn+0x5",
                       f"lockscope_target_fn+{size - 1:#x}"]
    assert not got[3].startswith("lockscope_target_fn")


def test_user_libc_function(symtest, tmp_path):
    exe = compile_child(tmp_path, "child", "-fPIE", "-pie")
    with Child(exe) as child:
        base, libc = load_base(child.pid, "libc.so")
        dyn = nm_symbols(libc, dynamic=True)
        [write] = set(dyn["write"])
        # Aliases at write's address: the library prefers fewest leading underscores.
        aliases = [n for n, addrs in dyn.items() if write in addrs]
        fewest = min(len(n) - len(n.lstrip("_")) for n in aliases)
        best = {n for n in aliases if len(n) - len(n.lstrip("_")) == fewest}
        got = lines(symtest, "usym", child.pid, hex(base + write), hex(base + write + 4))
    assert "write" in best
    assert got[0] in {f"{n}+0x0" for n in best}
    assert got[1] == got[0].replace("+0x0", "+0x4")


def test_user_symbols_survive_process_exit(symtest, tmp_path):
    exe = compile_child(tmp_path, "child", "-fPIE", "-pie")
    [fn] = nm_symbols(str(exe))["lockscope_target_fn"]
    with Child(exe) as child:
        base, libc = load_base(child.pid, "libc.so")
        [write] = set(nm_symbols(libc, dynamic=True)["write"])
        addrs = [hex(runtime_addr(child.pid, exe, fn) + 3), hex(base + write)]
        before = lines(symtest, "usym", child.pid, *addrs)
        snap = subprocess.Popen([symtest, "usym", "-w", str(child.pid), *addrs],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert snap.stdout.readline() == "loaded\n"
        child.end()
    assert not os.path.exists(f"/proc/{child.pid}")
    out, _ = snap.communicate("\n", timeout=patience(30))
    assert snap.returncode == 0
    assert out.splitlines() == before == ["lockscope_target_fn+0x3", before[1]]
    assert before[1].endswith("+0x0") and before[1] != UNKNOWN


def test_user_stripped_binary_uses_dynsym(symtest, tmp_path):
    exe = compile_child(tmp_path, "child", "-fPIE", "-pie", "-rdynamic")
    [fn] = nm_symbols(str(exe))["lockscope_target_fn"]
    subprocess.run([require_tool("strip"), "--strip-all", str(exe)], check=True)
    assert "lockscope_target_fn" in nm_symbols(str(exe), dynamic=True)
    with Child(exe) as child:
        got = lines(symtest, "usym", child.pid, hex(runtime_addr(child.pid, exe, fn) + 2))
    assert got == ["lockscope_target_fn+0x2"]


def test_user_address_without_symbol_names_the_file(symtest, tmp_path):
    exe = compile_child(tmp_path, "bare", "-fPIE", "-pie")
    [fn] = nm_symbols(str(exe))["lockscope_target_fn"]
    subprocess.run([require_tool("strip"), "--strip-all", str(exe)], check=True)
    with Child(exe) as child:
        addr = runtime_addr(child.pid, exe, fn)
        anon = next(m for m in mappings(child.pid) if m["path"] == "[stack]")
        got = lines(symtest, "usym", child.pid, hex(addr + 2), hex(anon["start"]), "0x1000")
    # Documented format: [basename+0xELF_vaddr], as addr2line -e FILE takes it.
    assert got == [f"[bare+{fn + 2:#x}]", UNKNOWN, UNKNOWN]


def test_user_pid_that_does_not_exist(symtest):
    pid = 1
    while os.path.exists(f"/proc/{pid}"):
        pid += 7919
    res = run(symtest, "usym", pid, "0x401000")
    assert res.stdout.splitlines() == [UNKNOWN]
    assert "No such process" in res.stderr


@pytest.mark.kernel
def test_user_deleted_executable(symtest, tmp_path):
    """A deleted file is still read through /proc/PID/map_files (root)."""
    exe = compile_child(tmp_path, "gone", "-fPIE", "-pie")
    [fn] = nm_symbols(str(exe))["lockscope_target_fn"]
    with Child(exe) as child:
        addr = runtime_addr(child.pid, exe, fn)
        exe.unlink()
        assert any(m["path"].endswith("gone (deleted)") for m in mappings(child.pid))
        got = lines(symtest, "usym", child.pid, hex(addr + 1))
    assert got == ["lockscope_target_fn+0x1"]


@pytest.mark.kernel
def test_user_vdso_function(symtest, tmp_path):
    """vDSO code has no file: its symbols come from the vDSO image itself."""
    exe = compile_child(tmp_path, "child", "-fPIE", "-pie")
    with Child(exe) as child:
        vdso = next(m for m in mappings(child.pid) if m["path"] == "[vdso]")
        with open(f"/proc/{child.pid}/mem", "rb") as mem:
            mem.seek(vdso["start"])
            (tmp_path / "vdso.so").write_bytes(mem.read(vdso["end"] - vdso["start"]))
        dyn = nm_symbols(str(tmp_path / "vdso.so"), dynamic=True)
        [fn] = set(dyn["clock_gettime"])
        got = lines(symtest, "usym", child.pid, hex(vdso["start"] + fn + 3))
    assert got == ["clock_gettime+0x3"]


# ---- inode -> path ------------------------------------------------------

def test_path_from_fds_finds_file_held_open(symtest, tmp_path):
    exe = compile_child(tmp_path, "holder", "-fPIE", "-pie")
    target = tmp_path / "held file.dat"
    target.write_bytes(b"x" * 100)
    other = tmp_path / "not-held"
    other.write_bytes(b"y")
    st, st_other = os.stat(target), os.stat(other)
    with Child(exe, str(target)) as child:
        assert lines(symtest, "path-fd", child.pid, st.st_dev, st.st_ino) == [str(target)]
        majmin = f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
        assert lines(symtest, "path-fd", child.pid, majmin, st.st_ino) == [str(target)]
        res = run(symtest, "path-fd", child.pid, st_other.st_dev, st_other.st_ino, ok=False)
        assert res.returncode == 1 and res.stdout == ""


def test_path_from_mount_walks_a_mount_on_root(symtest):
    """The mount on "/" is walked from "/" itself (its entries are "/etc", not "//etc")."""
    root, etc = os.stat("/"), os.stat("/etc")
    if etc.st_dev != root.st_dev:
        pytest.skip("/etc is a separate mount here")
    assert lines(symtest, "path-mount", etc.st_dev, etc.st_ino, 100_000) == ["/etc"]


def kdev(st_dev: int) -> int:
    """The kernel's encoding, as tracepoints print 'dev'."""
    return os.major(st_dev) << 20 | os.minor(st_dev)


@pytest.mark.kernel
def test_kdev_round_trip_for_loop_device(symtest, any_fs):
    rdev = os.stat(any_fs.device).st_rdev
    maj, mnr = os.major(rdev), os.minor(rdev)
    probe = any_fs.path / "probe"
    probe.write_bytes(b"z")
    assert os.stat(probe).st_dev == rdev
    assert lines(symtest, "kdev", kdev(rdev)) == [f"{maj}:{mnr} {os.makedev(maj, mnr)}"]


@pytest.mark.kernel
def test_path_from_mount_finds_file_by_inode(symtest, any_fs):
    deep = any_fs.path / "a" / "b b" / "c"
    deep.mkdir(parents=True)
    for i in range(50):
        (any_fs.path / "a" / f"filler{i}").write_bytes(b"")
    target = deep / "data.bin"
    target.write_bytes(b"d" * 4096)
    st = os.stat(target)
    assert lines(symtest, "path-mount", st.st_dev, st.st_ino) == [str(target)]
    # The recorder holds kernel-encoded devs.
    assert lines(symtest, "path-mount", "-k", kdev(st.st_dev), st.st_ino) == [str(target)]
    root = os.stat(any_fs.path)
    assert lines(symtest, "path-mount", root.st_dev, root.st_ino) == [str(any_fs.path)]
    # A budget too small to reach it.
    res = run(symtest, "path-mount", st.st_dev, st.st_ino, 3, ok=False)
    assert res.returncode == 1 and "Argument list too long" in res.stderr
    # An inode that is gone.
    gone = any_fs.path / "gone"
    gone.write_bytes(b"")
    ino = os.stat(gone).st_ino
    gone.unlink()
    res = run(symtest, "path-mount", st.st_dev, ino, ok=False)
    assert res.returncode == 1 and "No such file" in res.stderr


@pytest.mark.kernel
def test_one_walk_names_every_inode_of_a_device(symtest, any_fs):
    # A recording names many inodes; those gone (unlinked temporaries) are never found, so
    # each walk of their device runs to its budget: one walk must look for all of them.
    targets = []
    for d in range(4):
        sub = any_fs.path / f"dir{d}" / "inner"
        sub.mkdir(parents=True)
        for i in range(20):
            (sub / f"filler{i}").write_bytes(b"")
        target = sub / "table.ibd"
        target.write_bytes(b"t")
        targets.append(target)
    gone = []
    for i in range(3):
        g = any_fs.path / f"tmp{i}"
        g.write_bytes(b"")
        gone.append(os.stat(g).st_ino)
        g.unlink()
    entries = sum(len(dirs) + len(files) for _, dirs, files in os.walk(any_fs.path))
    inos = [gone[0], *(os.stat(t).st_ino for t in targets), *gone[1:]]
    dev = kdev(os.stat(any_fs.path).st_dev)
    out = lines(symtest, "path-cache", dev, entries, *inos)
    assert out == ["-", *map(str, targets), "-", "-", "walks 1"]


@pytest.mark.kernel
def test_path_from_mount_does_not_cross_mounts(symtest, loopfs_factory):
    outer = loopfs_factory("ext4", 256 << 20)
    inner_dir = outer.path / "sub"
    inner_dir.mkdir()
    inner = loopfs_factory("xfs", 512 << 20)
    subprocess.run(["mount", "--bind", str(inner.path), str(inner_dir)], check=True)
    try:
        f = inner_dir / "only-on-inner"
        f.write_bytes(b"")
        st = os.stat(f)
        assert st.st_dev != os.stat(outer.path).st_dev
        # Found through the inner fs's own mounts, never by walking outer into it.
        out = lines(symtest, "path-mount", st.st_dev, st.st_ino)
        assert out[0] in (str(inner.path / "only-on-inner"), str(f))
        res = run(symtest, "path-mount", os.stat(outer.path).st_dev, st.st_ino, ok=False)
        assert res.stdout.strip() != str(f)
    finally:
        subprocess.run(["umount", str(inner_dir)], check=True)


LIB_SRC = r"""
__attribute__((noinline)) int lockscope_lib_fn(int x)
{
	volatile int v = x;

	for (int i = 0; i < 8; i++)
		v = v * 5 + i;
	return v;
}
"""

LIB_CHILD_SRC = r"""
#include <stdio.h>
#include <unistd.h>
int lockscope_lib_fn(int x);
int main(void)
{
	char c;

	printf("ready %d\n", lockscope_lib_fn(1));
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	return 0;
}
"""


def section_names(path: Path) -> set[str]:
    out = subprocess.run([require_tool("readelf"), "-SW", str(path)], capture_output=True,
                         text=True, check=True).stdout
    return {m.group(1) for m in re.finditer(r"^\s*\[\s*\d+\]\s+(\S+)", out, re.M)}


def test_user_shared_library_without_symtab_uses_dynsym(symtest, tmp_path):
    require_tool("gcc")
    (tmp_path / "lib.c").write_text(LIB_SRC)
    (tmp_path / "main.c").write_text(LIB_CHILD_SRC)
    lib = tmp_path / "liblockscopet.so"
    subprocess.run(["gcc", "-O1", "-shared", "-fPIC", "-o", str(lib), str(tmp_path / "lib.c")],
                   check=True)
    [fn] = nm_symbols(str(lib))["lockscope_lib_fn"]
    subprocess.run([require_tool("strip"), "--strip-all", str(lib)], check=True)
    # stripped: no .symtab left, the exported function still in .dynsym
    assert ".symtab" not in section_names(lib) and ".dynsym" in section_names(lib)
    assert nm_symbols(str(lib), dynamic=True)["lockscope_lib_fn"] == [fn]
    exe = tmp_path / "child"
    subprocess.run(["gcc", "-O1", "-o", str(exe), str(tmp_path / "main.c"), f"-L{tmp_path}",
                    "-llockscopet", f"-Wl,-rpath,{tmp_path}"], check=True)
    with Child(exe) as child:
        base, path = load_base(child.pid, lib.name)
        got = lines(symtest, "usym", child.pid, hex(base + fn + 3))
    assert got == ["lockscope_lib_fn+0x3"]


STATIC_SRC = r"""
#include <stdio.h>
#include <unistd.h>
__attribute__((noinline)) static int lockscope_static_fn(int x)
{
	volatile int v = x;

	for (int i = 0; i < 8; i++)
		v = v * 7 + i;
	return v;
}
int main(int argc, char **argv)
{
	char c;

	printf("ready %d\n", lockscope_static_fn(argc));
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	return 0;
}
"""


def build_id(path: Path) -> str:
    out = subprocess.run([require_tool("readelf"), "-n", str(path)], capture_output=True,
                         text=True, check=True).stdout
    return next(ln.split()[-1] for ln in out.splitlines() if "Build ID" in ln)


def test_user_stripped_file_takes_symbols_from_its_debug_file(symtest, tmp_path):
    """A static function is in no .dynsym: only the separate debug file, found
    by build-id under the debug root, names it."""
    require_tool("gcc")
    (tmp_path / "s.c").write_text(STATIC_SRC)
    exe = tmp_path / "child"
    subprocess.run(["gcc", "-O1", "-Wl,--build-id", "-o", str(exe), str(tmp_path / "s.c")],
                   check=True)
    [fn] = nm_symbols(str(exe))["lockscope_static_fn"]
    bid = build_id(exe)
    root = tmp_path / "debug"
    dbg = root / ".build-id" / bid[:2] / f"{bid[2:]}.debug"
    dbg.parent.mkdir(parents=True)
    subprocess.run([require_tool("objcopy"), "--only-keep-debug", str(exe), str(dbg)], check=True)
    subprocess.run([require_tool("strip"), "--strip-all", str(exe)], check=True)
    assert ".symtab" not in section_names(exe)
    env = dict(os.environ, LOCKSCOPE_DEBUG_ROOT=str(root))
    with Child(exe) as child:
        addr = hex(runtime_addr(child.pid, exe, fn) + 1)
        with_debug = subprocess.run([symtest, "usym", str(child.pid), addr], env=env,
                                    capture_output=True, text=True, check=True).stdout.split()
        env["LOCKSCOPE_DEBUG_ROOT"] = str(tmp_path / "none")
        without = subprocess.run([symtest, "usym", str(child.pid), addr], env=env,
                                 capture_output=True, text=True, check=True).stdout.split()
    assert with_debug == ["lockscope_static_fn+0x1"]
    assert without != with_debug and without[0].startswith("[child+")


CXX_SRC = r"""
#include <cstdio>
#include <unistd.h>
namespace lockscope_ns {
struct Pool {
	__attribute__((noinline)) int wait_for(int x, const char *why);
};
int Pool::wait_for(int x, const char *why)
{
	volatile int v = x + why[0];

	for (int i = 0; i < 8; i++)
		v = v * 3 + i;
	return v;
}
}
int main()
{
	lockscope_ns::Pool p;
	char c;

	std::printf("ready %d\n", p.wait_for(1, "x"));
	std::fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	return 0;
}
"""


def test_user_cxx_names_are_demangled_without_parameters(symtest, tmp_path):
    gxx = require_tool("g++")
    (tmp_path / "c.cc").write_text(CXX_SRC)
    exe = tmp_path / "child"
    subprocess.run([gxx, "-O1", "-o", str(exe), str(tmp_path / "c.cc")], check=True)
    syms = nm_symbols(str(exe))
    [mangled] = [n for n in syms if "lockscope_ns" in n and "wait_for" in n]
    demangled = subprocess.run([require_tool("c++filt"), mangled], capture_output=True,
                               text=True, check=True).stdout.strip()
    assert demangled.startswith("lockscope_ns::Pool::wait_for(")
    [fn] = syms[mangled]
    with Child(exe) as child:
        got = lines(symtest, "usym", child.pid, hex(runtime_addr(child.pid, exe, fn) + 2))
    assert got == [demangled.split("(")[0] + "+0x2"]
