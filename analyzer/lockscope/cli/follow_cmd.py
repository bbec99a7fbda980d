"""``lockscope follow``: a standalone bpftrace script that watches one inode-lock finding
of a recording on any host with bpftrace."""

from __future__ import annotations

import argparse
import os
import sys

from ..errors import UsageError

EXAMPLES = [
    ("lockscope follow run/ -o follow-1.bt", "a script for the one i_rwsem finding"),
    ("lockscope follow run/results.json", "several findings: lists them, numbered"),
    ("lockscope follow run/ --lock 2 --holders -o f2.bt", "finding 2, with holder stacks"),
    ("lockscope follow run/ --file /data/t1.ibd -o f.bt", "this host's copy of the file"),
    ("lockscope follow run/ --probes kprobe -o old.bt", "kernels before 5.19"),
    ("lockscope follow run/ --one-liner", "a bpftrace -e command"),
]
NOTES = """
Run the script as root where bpftrace is installed; Ctrl-C prints the summary:
  bpftrace follow-1.bt                        # the recorded file (dev and ino in the header)
  bpftrace follow-1.bt 259 3 1835011          # another file: its MAJOR MINOR INO
The script finds the file by its device and inode number (not by the recording's lock
address), so it runs on other hosts: give it that host's file as MAJOR MINOR INO
(stat -c '%Hd %Ld %i' FILE), or write it there with --file. Its --probes variant is
chosen here: the bpftrace of Debian 11 and 12 cannot make a missing probe optional.
Exit status: 0 written; 2 no i_rwsem finding, several and no --lock, or bad input.
See docs/follow.md.
"""


def add_parser(sub) -> None:
    """Register the ``follow`` subcommand."""
    p = sub.add_parser(
        "follow", help="write a standalone bpftrace script that watches an inode-lock "
        "finding on any host",
        description="Write a bpftrace script (.bt) that counts and histograms the waits on "
        "the i_rwsem (on XFS the IOLOCK) of a file a recording found contended, finding "
        "the file by device and inode number. It needs only bpftrace and kernel BTF on "
        "the host that runs it. Findings are numbered by wait time, most first.")
    p.add_argument("results", help="results.json of a sweep or an attach, or its directory")
    p.add_argument("--lock", type=int, metavar="N",
                   help="the Nth i_rwsem finding (1 = most wait time; required when "
                   "there are several)")
    p.add_argument("--holders", action="store_true",
                   help="also count the kernel stacks of the tasks that release the lock "
                   "to a waiter (the holders)")
    p.add_argument("--file", metavar="PATH",
                   help="a file on this host whose device and inode number the script "
                   "uses by default instead of the recording's (stat)")
    p.add_argument("--probes", choices=("tracepoint", "kprobe"), default="tracepoint",
                   help="lock:contention_* tracepoints (Linux 5.19 and later; default), or "
                   "kprobes on the rwsem slow paths (older kernels)")
    p.add_argument("--one-liner", action="store_true",
                   help="print a bpftrace -e command instead of a script (tracepoints, "
                   "count, total and histogram only)")
    p.add_argument("-o", "--output", metavar="FILE",
                   help="write the script to FILE (default: standard output)")
    p.add_argument("--force", action="store_true",
                   help="overwrite FILE even if lockscope did not write it")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # imported here: every start of lockscope imports this module for its parser
    from pathlib import Path

    from ..analysis.inode_findings import followed_findings, inode_lock_findings
    from ..report.follow_script import follow_script, one_liner
    from ..report.follow_targets import finding_line, target_of, target_of_file
    from ..report.outputs import OutputGuard
    from ..results import load_results
    from ..run.outdir import check_dir

    if args.one_liner and (args.holders or args.probes != "tracepoint"):
        raise UsageError("--one-liner is the tracepoint count and histogram only: "
                         "--holders and --probes kprobe write a script")
    doc = load_results(args.results)
    findings = followed_findings(doc)
    if not findings:
        others = sorted({f.kind for f in inode_lock_findings(doc)})
        raise UsageError(
            "no i_rwsem finding in the recording" + (
                f" (its inode-lock waits are on {', '.join(others)}, which a follow script "
                "cannot find from the inode alone)" if others else
                " (no waits on a file's inode lock were recorded)"))
    if args.lock is None and len(findings) > 1:
        for n, f in enumerate(findings, 1):
            print(finding_line(n, f))
        raise UsageError(f"{len(findings)} i_rwsem findings (listed above): choose one "
                         "with --lock N")
    n = args.lock if args.lock is not None else 1
    if not 1 <= n <= len(findings):
        raise UsageError(f"--lock {n}: the recording has {len(findings)} i_rwsem "
                         f"finding{'s' if len(findings) > 1 else ''} (1 to {len(findings)})")
    finding = findings[n - 1]
    source = Path(args.results)
    target = (target_of_file(args.file, n, finding, source) if args.file
              else target_of(n, finding, source))
    name = Path(args.output).name if args.output else "follow.bt"
    text = (one_liner(target) + "\n" if args.one_liner
            else follow_script(target, args.probes, args.holders, name))
    if not args.output:
        sys.stdout.write(text)
        return 0
    out = Path(args.output)
    check_dir(out.parent, "-o")
    out.parent.mkdir(parents=True, exist_ok=True)
    guard = OutputGuard(args.force)
    guard.claim(out, stamped=not args.one_liner)
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(text)
    os.replace(tmp, out)
    guard.save()
    print(f"lockscope follow: wrote {out} (run: bpftrace {out}; Ctrl-C prints the summary)"
          if not args.one_liner else f"lockscope follow: wrote {out}", file=sys.stderr)
    return 0
