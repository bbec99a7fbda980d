"""``lockscope doctor``: its options. What it checks (cli.doctor_checks) is imported only
when it runs, as every start of lockscope builds this parser."""

from __future__ import annotations

# Shown at the end of --help (command, what it does), as libbpf-tools do.
EXAMPLES = [
    ('lockscope doctor', 'what this kernel and machine allow'),
    ('lockscope doctor --json', '{"ok": true|false, "checks": [...]}'),
]

# --list-timeout: the recorder's listing of its probe groups (run.probe_groups) takes
# minutes on a slow or emulated machine
DEFAULT_TIMEOUT_S = 600.0


def _positive(text: str) -> float:
    import argparse

    try:
        value = float(text)
    except ValueError:
        value = 0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"'{text}' is not a positive number of seconds")
    return value


def add_parser(sub) -> None:
    p = sub.add_parser("doctor", help="say what this kernel and machine allow",
                       description="Check root, bpf(), BTF, tracefs, attach types (by loading "
                       "test programs), the tracepoints the probes need, and the tools used by "
                       "sweeps. Exit status is non-zero only if a required piece is missing.")
    p.add_argument("--json", action="store_true", help="print machine-readable JSON")
    p.add_argument("--list-timeout", type=_positive, default=DEFAULT_TIMEOUT_S, metavar="S",
                   help="seconds the recorder may take to load and attach every probe group "
                   f"(minutes on a slow or emulated machine) (default: {DEFAULT_TIMEOUT_S:g})")
    p.set_defaults(func=run)


def run(args) -> int:
    from .doctor_checks import run_doctor

    return run_doctor(args)
