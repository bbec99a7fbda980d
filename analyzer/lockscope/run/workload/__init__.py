"""Sweeps of external workloads: a command template run at each thread count on the
filesystem under test, traced through its process tree, its throughput read by a named
parser (or counted from the trace's system calls)."""
