"""Kernel frames of the tracing machinery: the BPF program and the tracepoint or
perf code that called it, between the traced kernel code and the probe. They
say nothing about a wait.

This tuple is the only list: the recorder's C side is built from it
(bpf/recorder/machinery_h.py writes ``machinery.h`` for stacks.c, which trims
these frames from the leaf end of every kernel stack, and
``lockscope-record --list-features`` prints them as ``machinery_frames``), and
the analysis skips them where it looks for the function that waited or the
code that woke a waiter.
"""

from __future__ import annotations

# Prefixes of function names (frames are ``name+0xoff``).
MACHINERY_PREFIXES: tuple[str, ...] = (
    "bpf_prog_", "bpf_trace_run", "__bpf_trace_", "__traceiter_", "bpf_trampoline_",
    "trace_call_bpf", "perf_trace_", "perf_syscall_", "trace_event_raw_event_",
    "__bpf_prog_run", "bpf_get_stackid", "__traceeval", "trace_contention_",
)
