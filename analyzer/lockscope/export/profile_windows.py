"""The /debug/pprof/mutex and /debug/pprof/block profiles of a snapshot, whole or over
the last N seconds.

As in Go, a profile without ``seconds`` holds everything since the exporter started
(cumulative: a scraper takes differences). With ``?seconds=N`` it holds the intervals
that ended in the last N seconds of recording, at once: Go would sleep N seconds and
return what happened meanwhile, which ties up a connection; the window that just
ended is the same measure without the wait. N is capped at the snapshot's window
(``ExportState(window_s=...)``), and the profile says so in a comment.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..errors import UsageError
from .export_state import ExportSnapshot
from .pprof_writer import SampleKey, build_profile, gzip_profile
from .stack_coverage import stack_coverage

KINDS = {
    "mutex": "lockscope mutex profile: kernel lock waits of the traced threads "
             "(contentions, delay)",
    "block": "lockscope block profile: off-CPU waits of the traced threads that are "
             "loss, not waiting for work (contentions, delay)",
}


def parse_seconds(raw: str | None) -> int | None:
    """``?seconds=N``: a positive whole number, or None when absent."""
    if raw is None or raw == "":
        return None
    try:
        n = int(raw)
    except ValueError:
        raise UsageError(f"seconds={raw!r}: expected a whole number of seconds") from None
    if n <= 0:
        raise UsageError(f"seconds={raw!r}: expected a positive number of seconds")
    return n


def window_samples(snap: ExportSnapshot, kind: str, seconds: int | None
                   ) -> tuple[Mapping[SampleKey, tuple[int, int]], int, int, list[str]]:
    """(samples, duration ns, start wall ns, comments) of a profile request."""
    notes: list[str] = []
    if seconds is None:
        samples = snap.mutex_total if kind == "mutex" else snap.block_total
        return samples, snap.duration_ns, snap.first_wall_ns, notes
    if seconds > snap.window_s:
        notes.append(f"seconds={seconds} capped at the {snap.window_s:g} s this exporter "
                     "keeps")
    cut = snap.last_end_mono_ns - min(seconds, snap.window_s) * 1e9
    picked = [d for d in snap.recent if d.end_mono_ns > cut]
    out: dict[SampleKey, tuple[int, int]] = {}
    for d in picked:
        for key, (c, n) in (d.mutex if kind == "mutex" else d.block).items():
            oc, on = out.get(key, (0, 0))
            out[key] = (oc + c, on + n)
    if not picked:
        return out, 0, snap.last_wall_ns, notes
    start = picked[0].start_mono_ns
    return out, picked[-1].end_mono_ns - start, start + snap.mono_to_wall_ns, notes


def profile_bytes(snap: ExportSnapshot, kind: str, seconds: int | None) -> bytes:
    """The gzip'd pprof profile ``kind`` (mutex or block) of the snapshot."""
    samples, duration, start, notes = window_samples(snap, kind, seconds)
    comments = [KINDS[kind], *notes]
    share = snap.observed_ns / snap.duration_ns if snap.duration_ns else None
    if share is not None and share < 0.995:
        comments.append(f"the probes were attached {share:.0%} of the time (--duty): "
                        "waits of at least --long-wait (sampling=long) are counted all the "
                        "time; shorter ones (sampling=scaled) were counted while observed "
                        f"and scaled by the inverse, x{1 / max(share, 1e-9):.3g} over the "
                        "exporter's life (per interval, its own)")
    comments.append(stack_coverage(samples).comment())
    return gzip_profile(build_profile(samples, duration_ns=duration, time_ns=start,
                                      comments=comments))
