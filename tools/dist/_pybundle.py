"""Make an installed CPython tree self-contained and relocatable. Run by build-python with
that tree's own interpreter inside the build root (Debian 11), after pip has filled its
site-packages:  python3.11 -I _pybundle.py TREE PATCHELF

1. prunes what a host running lockscope does not need: test suites, IDLE, tkinter,
   lib2to3, ensurepip, headers, the static libpython, scripts pip wrote (their #! line
   names the build path);
2. copies in every shared library that an ELF file of the tree needs (ldd, in the root)
   beyond what any glibc >= 2.31 host has (glibc's own libraries, and libstdc++ and
   libgcc_s that manylinux wheels may assume) into TREE/lib, by soname;
3. gives every ELF file that needs one of them a RUNPATH $ORIGIN/<relative path to lib>
   (the bundled libraries themselves $ORIGIN), so the tree works from any directory;
4. checks with ldd that every ELF file now finds all it needs, each non-host library
   inside the tree;
5. byte-compiles the tree once (optimization level 0, checked-hash pycs: valid wherever
   the tree is copied, whatever the files' times);
6. writes TREE/BUILDINFO.json: the Python version, the bundled libraries with the Debian
   packages they come from, the installed distributions."""

from __future__ import annotations

import compileall
import importlib.metadata
import json
import os
import py_compile
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

# what every glibc host has: glibc's libraries, and the two that manylinux allows wheels
# to need from the system (every Debian, RHEL and Ubuntu host with apt or dnf has them)
HOST_LIBS = {"linux-vdso.so.1", "ld-linux-x86-64.so.2", "libc.so.6", "libm.so.6",
             "libpthread.so.0", "libdl.so.2", "librt.so.1", "libutil.so.1",
             "libresolv.so.2", "libanl.so.1", "libstdc++.so.6", "libgcc_s.so.1"}
PRUNE_STDLIB = ["idlelib", "tkinter", "turtledemo", "ensurepip", "lib2to3", "test",
                "unittest/test", "ctypes/test", "sqlite3/test", "distutils/tests",
                "turtle.py", "__phello__"]
KEEP_BIN = {"python3", "python3.11"}


def say(msg: str) -> None:
    print(f"_pybundle: {msg}", flush=True)


def is_elf(p: Path) -> bool:
    if p.is_symlink() or not p.is_file():
        return False
    with p.open("rb") as f:
        return f.read(4) == b"\x7fELF"


def elves(tree: Path) -> list[Path]:
    return sorted(p for p in tree.rglob("*") if is_elf(p))


_LDD = re.compile(r"^\s*(\S+)(?: => (\S+|not found))?(?: \(0x[0-9a-f]+\))?\s*$")


def ldd(p: Path) -> dict[str, str | None]:
    """soname -> the path it resolves to (None: not found), the whole closure."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C"}
    out = subprocess.run(["ldd", str(p)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, env=env).stdout
    deps: dict[str, str | None] = {}
    for line in out.splitlines():
        m = _LDD.match(line)
        if not m or "statically linked" in line or "not a dynamic" in line:
            continue
        name, where = m.group(1), m.group(2)
        if where is None:              # the vdso, or the loader by its path
            deps[os.path.basename(name)] = name
        else:
            deps[name] = None if where == "not found" else where
    return deps


def prune(tree: Path, stdlib: Path) -> None:
    # nis (deprecated; NIS is long gone from database hosts) would bring libnsl, libtirpc
    # and with them Kerberos
    for p in (stdlib / "lib-dynload").glob("nis.*.so"):
        p.unlink()
    for rel in PRUNE_STDLIB:
        p = stdlib / rel
        if p.is_dir():
            shutil.rmtree(p)
        elif p.exists():
            p.unlink()
    for p in (tree / "include", tree / "share", tree / "lib/pkgconfig"):
        shutil.rmtree(p, ignore_errors=True)
    for p in [*tree.glob("lib/libpython*"), *stdlib.glob("config-*/*.a"),
              *stdlib.glob("config-*/*.o")]:
        p.unlink()
    for p in (tree / "bin").iterdir():
        if p.name not in KEEP_BIN:
            p.unlink() if not p.is_dir() or p.is_symlink() else shutil.rmtree(p)
    site = stdlib / "site-packages"
    for p in sorted(site.rglob("tests"), key=lambda p: -len(p.parts)):
        if p.is_dir() and p.exists():
            shutil.rmtree(p)
    for p in tree.rglob("__pycache__"):
        shutil.rmtree(p, ignore_errors=True)


def bundle(tree: Path, patchelf: str) -> dict[str, str]:
    lib = tree / "lib"
    bundled: dict[str, str] = {}           # soname -> where it came from
    todo = elves(tree)
    inside = {p.name for p in todo}
    seen: set[Path] = set()
    while todo:
        elf = todo.pop()
        if elf in seen:
            continue
        seen.add(elf)
        for name, where in ldd(elf).items():
            if name in HOST_LIBS or name.startswith("ld-linux"):
                continue
            if where is None:
                if name in inside:
                    continue               # in a wheel's .libs, found once its user loads it
                sys.exit(f"_pybundle: {elf} needs {name}, found nowhere in the build root")
            if Path(where).resolve().is_relative_to(tree.resolve()):
                continue                   # a wheel's own .libs, or one already bundled
            if name not in bundled:
                dest = lib / name
                shutil.copy2(Path(where).resolve(), dest)
                dest.chmod(0o755)
                bundled[name] = str(Path(where).resolve())
                todo.append(dest)
    # search paths: every ELF file that needs a bundled library directly. One that had a
    # DT_RPATH keeps one (a wheel's libraries may rely on it being inherited by what they
    # load); one that had none gets a DT_RUNPATH, and since that stops the inherited
    # DT_RPATH of whatever loads it from applying, it also gets the directories of the
    # tree's libraries it needs (a wheel's .libs)
    all_elves = elves(tree)
    where_in_tree: dict[str, list[Path]] = {}
    for p in all_elves:
        where_in_tree.setdefault(p.name, []).append(p.parent)
    for elf in all_elves:
        needed = subprocess.run([patchelf, "--print-needed", str(elf)], check=True,
                                stdout=subprocess.PIPE, text=True).stdout.split()
        if not set(needed) & set(bundled):
            continue
        dirs = [lib]
        for n in needed:
            if n in bundled or n not in where_in_tree:
                continue
            homes = where_in_tree[n]
            dirs.append(elf.parent if elf.parent in homes else homes[0])
        old = subprocess.run([patchelf, "--print-rpath", str(elf)], check=True,
                             stdout=subprocess.PIPE, text=True).stdout.strip()
        parts = [p for p in old.split(":") if p and not p.startswith("/")]   # no build paths
        for d in reversed(dirs):
            rel = os.path.relpath(d, elf.parent)
            entry = "$ORIGIN" if rel == "." else f"$ORIGIN/{rel}"
            if entry not in parts:
                parts.insert(0, entry)
        dynamic = subprocess.run(["readelf", "-d", str(elf)], check=True,
                                 stdout=subprocess.PIPE, text=True).stdout
        force = ["--force-rpath"] if "(RPATH)" in dynamic else []
        # on a copy, renamed over the file: this process may have the file mapped
        tmp = elf.with_name(elf.name + ".patchelf")
        shutil.copy2(elf, tmp)
        subprocess.run([patchelf, *force, "--set-rpath", ":".join(parts), str(tmp)],
                       check=True)
        os.replace(tmp, elf)
    return bundled


def check(tree: Path) -> None:
    bad = []
    found = elves(tree)
    inside = {p.name for p in found}
    for elf in found:
        for name, where in ldd(elf).items():
            if where is None and name in inside and "/site-packages/" in str(elf):
                continue
            if where is None:
                bad.append(f"{elf.relative_to(tree)}: {name} not found")
            elif name not in HOST_LIBS and not name.startswith("ld-linux") and \
                    not Path(where).resolve().is_relative_to(tree.resolve()):
                bad.append(f"{elf.relative_to(tree)}: {name} from {where}, outside the tree")
    if bad:
        sys.exit("_pybundle: " + "\n  ".join(["libraries not bundled:", *bad]))


def compile_tree(stdlib: Path) -> None:
    ok = compileall.compile_dir(
        str(stdlib), quiet=1, workers=os.cpu_count() or 1, optimize=0,
        invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH,
        # data, not code: templates and the like that some packages ship as .py files
        rx=re.compile(r"/(bad_coding|badsyntax)"))
    if not ok:
        say("warning: some files did not byte-compile (they still import from source)")


def debian_package(path: str) -> str:
    p = subprocess.run(["dpkg-query", "-S", path], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, text=True)
    if p.returncode != 0:                  # /lib is a symlink to /usr/lib in newer roots
        alt = path.replace("/usr/lib/", "/lib/", 1) if path.startswith("/usr/lib/") \
            else path.replace("/lib/", "/usr/lib/", 1)
        p = subprocess.run(["dpkg-query", "-S", alt], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True)
    if p.returncode != 0:
        return "?"
    pkg = p.stdout.split(":")[0].strip()
    ver = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", pkg],
                         stdout=subprocess.PIPE, text=True).stdout
    return f"{pkg} {ver}"


def main() -> None:
    tree, patchelf = Path(sys.argv[1]).resolve(), sys.argv[2]
    stdlib = tree / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    prune(tree, stdlib)
    bundled = bundle(tree, patchelf)
    say("bundled: " + " ".join(sorted(bundled)))
    check(tree)
    compile_tree(stdlib)
    dists = sorted(f"{d.metadata['Name']}=={d.version}" for d in
                   importlib.metadata.distributions(path=[str(stdlib / "site-packages")]))
    info = {"python": sys.version.split()[0],
            "prefix_compiled_in": sysconfig.get_config_var("prefix"),
            "built_on_glibc": (os.confstr("CS_GNU_LIBC_VERSION") or "? ?").split()[1],
            "bundled_libs": {n: debian_package(p) for n, p in sorted(bundled.items())},
            "host_libs": sorted(HOST_LIBS), "site_packages": dists}
    (tree / "BUILDINFO.json").write_text(json.dumps(info, indent=1) + "\n")


if __name__ == "__main__":
    main()
