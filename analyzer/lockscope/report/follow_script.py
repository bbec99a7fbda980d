"""A standalone bpftrace script (and a one-liner) that watches the waits on one file's
i_rwsem on any host with bpftrace, without lockscope: the text ``lockscope follow``
writes, and the report's ``follow-<N>.bt``.

The script finds the file by device and inode number, never by the recording's lock
address: it learns the inode (``struct inode *``) from the first read, write or sync
call naming a descriptor of the file (``curtask->files->fdt->fd[fd]->f_inode``, kernel
BTF), compares ``i_sb->s_dev`` and ``i_ino``, and then takes a lock wait as one on the
file's i_rwsem when the lock lies in the inode below its ``i_data`` (``i_mapping``
points there for a regular file: fs/inode.c, inode_init_always) and is a sleeping
read/write lock: ``struct inode`` holds no other rw_semaphore before ``i_data``
(include/linux/fs.h), and Debian 12's bpftrace 0.17 has neither ``offsetof()`` (0.19)
nor ``&`` to take ``&inode->i_rwsem`` directly.

What the host's kernel offers decides the probes, and the bpftrace Debian 11 and 12
ship (0.11, 0.17) cannot make a probe optional (a missing tracepoint, even through a
wildcard, is an error: checked with 0.17), so that one choice is made when the script
is written (``--probes``):

- ``tracepoint``: ``lock:contention_begin``/``contention_end`` (include/trace/events/
  lock.h, from 5.19); the wait is the waiter's first begin to its end on that lock, as
  lockscope-record's ``lock`` group counts it;
- ``kprobe``: ``rwsem_down_write_slowpath``/``rwsem_down_read_slowpath`` entry to
  return (kernel/locking/rwsem.c), for kernels without those tracepoints, as the
  recorder's ``lock_slowpath`` group counts it.

The target's dev and ino are the script's positional parameters (``bpftrace
follow-1.bt MAJOR MINOR INO``), the finding's own values (or a file's of this host,
``--file``) when none are given: the same file has another inode number, often another
device, on another host.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import __version__

PROBES = ("tracepoint", "kprobe")
STAMP = "// generator: lockscope follow"

# Where the tests ran each variant for real (tests/kernel/follow/test_follow_kernel.py), and against
# what: the script's header repeats it.
TESTED = {
    "tracepoint": "count and total wait within 5% of lockscope-record's over the same\n"
                  "//   run on Linux 6.18 and Debian 12's 6.1 with bpftrace 0.17.0, and on\n"
                  "//   Debian 13's 6.12 with bpftrace 0.23.2",
    "kprobe": "compiled by bpftrace 0.17.0 against Linux 6.18's BTF (that kernel allows\n"
              "//   no kprobes); Debian 11's bpftrace 0.11.3 on 5.10 compiles no script\n"
              "//   (its BTF definitions lack u64, size_t): needs a newer bpftrace there;\n"
              "//   its probes are those of lockscope-record's lock_slowpath group",
}

# lock:contention_begin flags, include/trace/events/lock.h (from 5.19): LCB_F_SPIN 1,
# LCB_F_READ 2, LCB_F_WRITE 4. A spinning wait inside the inode (i_lock, or the
# i_rwsem's own wait_lock) is not the i_rwsem.
LCB_F_SPIN = 1
LCB_F_READ_WRITE = 2 | 4

# The system calls the script learns the file's inode from: each names a descriptor
# in `fd` (an unsigned int in every one of them, so one probe reads them all).
LEARN_CALLS = ("write", "pwrite64", "read", "pread64", "fsync", "fdatasync")


@dataclass(frozen=True)
class Target:
    """The file followed: what the header says, and the script's default dev and ino."""

    path: str | None
    major: int
    minor: int
    ino: int
    what: str = ""        # e.g. "finding 1 of run/results.json: i_rwsem, 63.4% of lock waits"


def mkdev(major: int, minor: int) -> int:
    """The kernel's dev_t of a device: MKDEV(ma, mi) = ma << MINORBITS | mi, MINORBITS
    20 (include/linux/kdev_t.h); ``s_dev`` holds it, not the user-space encoding."""
    return (major << 20) | minor


def _learn_probe(dev: str, ino: str) -> str:
    attach = ",\n".join(f"tracepoint:syscalls:sys_enter_{c}" for c in LEARN_CALLS)
    return f"""{attach}
{{
	// fd -> file -> inode (include/linux/fdtable.h, struct fdtable); the fd table's
	// entry is read by address: bpftrace 0.17 indexes only by a constant
	$fdt = ((struct task_struct *)curtask)->files->fdt;
	$fd = (uint64)args->fd;
	if ($fd < (uint64)$fdt->max_fds) {{
		$file = (struct file *)*(uint64 *)((uint64)$fdt->fd + 8 * $fd);
		$inode = $file->f_inode;
		if ((uint64)$inode->i_ino == {ino} && (uint64)$inode->i_sb->s_dev == {dev}) {{
			@inode = (uint64)$inode;
			@i_data = (uint64)$inode->i_mapping;
		}}
	}}
}}
"""


_TRACEPOINT_WAITS = f"""tracepoint:lock:contention_begin
/@start[tid] == 0 && (uint64)args->lock_addr >= @inode && (uint64)args->lock_addr < @i_data &&
 (args->flags & {LCB_F_READ_WRITE}) && !(args->flags & {LCB_F_SPIN})/
{{
	// a sleeping read/write lock in the inode below i_data: its i_rwsem
	@start[tid] = nsecs;
	@lock[tid] = (uint64)args->lock_addr;
}}

tracepoint:lock:contention_end
/@start[tid] && (uint64)args->lock_addr == @lock[tid]/
{{
	$ns = nsecs - @start[tid];
	@waits = count();
	@wait_ns = sum($ns);
	@max_wait_ns = max($ns);
	@wait_ns_hist = hist($ns);
	delete(@start[tid]);
	delete(@lock[tid]);
}}
"""

_KPROBE_WAITS = """kprobe:rwsem_down_write_slowpath,
kprobe:rwsem_down_read_slowpath
/@start[tid] == 0 && arg0 >= @inode && arg0 < @i_data/
{
	// an rw_semaphore in the inode below i_data: its i_rwsem
	@start[tid] = nsecs;
	@lock[tid] = arg0;
}

kretprobe:rwsem_down_write_slowpath,
kretprobe:rwsem_down_read_slowpath
/@start[tid]/
{
	$ns = nsecs - @start[tid];
	@waits = count();
	@wait_ns = sum($ns);
	@max_wait_ns = max($ns);
	@wait_ns_hist = hist($ns);
	delete(@start[tid]);
	delete(@lock[tid]);
}
"""

_HOLDERS = """tracepoint:sched:sched_waking
/@start[args->pid]/
{
	// a waiter is woken by the task releasing the lock (up_write/up_read ->
	// rwsem_wake -> wake_up_q, kernel/locking/rwsem.c), in that task: the
	// holder's kernel stack as it lets go
	@holder_stacks[comm, kstack] = count();
}
"""


def _measures(probes: str) -> str:
    if probes == "tracepoint":
        return ("each wait from the waiter's first lock:contention_begin to its\n"
                "//   lock:contention_end on that lock (the contention interval: how\n"
                "//   lockscope-record's lock group counts a wait, docs/recorder-json.md);\n"
                "//   needs lock:contention_* (Linux 5.19 and later)")
    return ("each wait from entry to return of rwsem_down_write_slowpath or\n"
            "//   rwsem_down_read_slowpath (how lockscope-record's lock_slowpath group\n"
            "//   counts a wait on kernels without lock:contention_*); needs kprobes")


def _header(target: Target, probes: str, holders: bool, name: str) -> str:
    where = target.path or "(path not recorded)"
    other = "tracepoint" if probes == "kprobe" else "kprobe"
    lines = [
        f"{STAMP} {__version__}",
        f"// {name}: waits on one file's i_rwsem (XFS: the IOLOCK), by dev and ino",
        "//",
        f"// File:     {where}",
        f"//           dev {target.major}:{target.minor}, ino {target.ino}",
        *([f"// From:     {target.what}"] if target.what else []),
        f"// Measures: {_measures(probes)}.",
        "//   Prints the number of waits, their total, the longest and a log2 histogram,",
        "//   in nanoseconds; all tasks on the host count.",
        "// Finds:    the file's inode from the first write/read/fsync call on a",
        "//   descriptor of it after the start (kernel BTF), never from an old lock",
        "//   address; a file only reached otherwise (io_uring, mmap) is not found,",
        "//   and the summary then says the waits were NOT measured.",
    ]
    if holders:
        lines.append("// Holders:  @holder_stacks counts wakeups of waiters by the waking task's\n"
                     "//   command and kernel stack: the holder releasing the lock (up_write,\n"
                     "//   up_read), or a waiter handing it on (rwsem_down_*_slowpath).")
    lines += [
        f"// Tested:   {TESTED[probes]}.",
        f"// Run:      bpftrace {name}                  # this file: "
        f"{target.major} {target.minor} {target.ino}",
        f"//           bpftrace {name} MAJOR MINOR INO  # another host's file:",
        "//             stat -c '%Hd %Ld %i' FILE  gives MAJOR MINOR INO",
        "//           Ctrl-C prints the summary. Root (or CAP_BPF and CAP_PERFMON).",
        f"// Other kernels: lockscope follow ... --probes {other}"
        + (" (kernels before 5.19)" if other == "kprobe" else " (5.19 and later)"),
    ]
    return "\n".join(lines) + "\n"


def follow_script(target: Target, probes: str = "tracepoint", holders: bool = False,
                  name: str = "follow.bt") -> str:
    """The whole .bt script."""
    if probes not in PROBES:
        raise ValueError(f"probes {probes!r}")
    # positional parameters are constants to bpftrace: the choice costs nothing per event
    dev = f"(uint64)($# >= 3 ? ($1 << 20) | $2 : {mkdev(target.major, target.minor)})"
    ino = f"(uint64)($# >= 3 ? $3 : {target.ino})"
    begin = (
        "BEGIN\n{\n"
        '\tprintf("following i_rwsem of dev %d:%d ino %d (%s probes); '
        'Ctrl-C prints the summary\\n",\n'
        f'\t\t$# >= 3 ? $1 : {target.major}, $# >= 3 ? $2 : {target.minor}, {ino}, '
        f'"{probes}");\n}}\n')
    end = """END
{
	if (@inode == 0) {
		printf("\\nNOT MEASURED: no read, write or sync call on the file was seen, ");
		printf("so its lock was not found\\n");
	} else {
		printf("\\nwaits on i_rwsem of inode 0x%lx (times in ns):\\n", @inode);
	}
	clear(@inode);
	clear(@i_data);
	clear(@start);
	clear(@lock);
}
"""
    parts = [_header(target, probes, holders, name), begin, _learn_probe(dev, ino),
             _TRACEPOINT_WAITS if probes == "tracepoint" else _KPROBE_WAITS]
    if holders:
        parts.append(_HOLDERS)
    parts.append(end)
    return "\n".join(parts)


def one_liner(target: Target) -> str:
    """A ``bpftrace -e`` command of the tracepoint variant, the file's dev and ino built
    in: the count, total and histogram of the waits, in ns."""
    dev, ino = mkdev(target.major, target.minor), target.ino
    calls = ",".join(f"tracepoint:syscalls:sys_enter_{c}" for c in ("write", "pwrite64"))
    prog = (
        f"{calls} {{ $t = curtask->files->fdt; $fd = (uint64)args->fd; "
        f"if ($fd < (uint64)$t->max_fds) {{ "
        f"$i = ((struct file *)*(uint64 *)((uint64)$t->fd + 8 * $fd))->f_inode; "
        f"if ((uint64)$i->i_ino == {ino} && (uint64)$i->i_sb->s_dev == {dev}) {{ "
        f"@i = (uint64)$i; @m = (uint64)$i->i_mapping; }} }} }} "
        f"tracepoint:lock:contention_begin /@s[tid] == 0 && (uint64)args->lock_addr >= @i && "
        f"(uint64)args->lock_addr < @m && (args->flags & {LCB_F_READ_WRITE}) && "
        f"!(args->flags & {LCB_F_SPIN})/ {{ @s[tid] = nsecs; @a[tid] = (uint64)args->lock_addr; }} "
        f"tracepoint:lock:contention_end /@s[tid] && (uint64)args->lock_addr == @a[tid]/ {{ "
        f"@waits = count(); @wait_ns = sum(nsecs - @s[tid]); "
        f"@wait_ns_hist = hist(nsecs - @s[tid]); delete(@s[tid]); delete(@a[tid]); }} "
        f"END {{ clear(@i); clear(@m); clear(@s); clear(@a); }}")
    return f"bpftrace -e '{prog}'"
