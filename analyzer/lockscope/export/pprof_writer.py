"""Gzip'd pprof profiles (the format of Go's /debug/pprof endpoints) from wait samples.

A sample is a kernel stack and a user stack (both leaf first, as the recorder writes
them), string labels, and two values: contentions and delay in nanoseconds. In the
profile the kernel frames come first (the leaf), then the user frames (their callers),
each frame one Location with one Line and Function; kernel and user frames sit in
separate Mappings (``[kernel.kallsyms]`` and ``[user]``), marked as symbolized so
readers take the names as they are. The message is built with the protobuf runtime
from ``profile.proto`` (``make proto``).
"""

from __future__ import annotations

import gzip
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from . import profile_pb2

# (kernel frames leaf first, user frames leaf first, ((label key, value), ...))
SampleKey = tuple[tuple[str, ...], tuple[str, ...], tuple[tuple[str, str], ...]]
# (contentions, delay ns)
SampleValue = tuple[int, int]
Samples = Mapping[SampleKey, SampleValue]

KERNEL_MAPPING = 1
USER_MAPPING = 2
NO_STACK = "[no stack]"


def frame_function(frame: str) -> str:
    """``rwsem_down_write_slowpath+0x3a`` → ``rwsem_down_write_slowpath``; an
    unsymbolized ``[fio+0x5dd0c]`` stays whole (its module and address are its name)."""
    if frame.startswith("["):
        return frame
    return frame.rsplit("+0x", 1)[0]


def frame_offset(frame: str) -> int:
    """The ``+0x..`` offset of a symbolized frame, else 0."""
    if frame.startswith("[") or "+0x" not in frame:
        return 0
    try:
        return int(frame.rsplit("+0x", 1)[1], 16)
    except ValueError:
        return 0


@dataclass(frozen=True)
class ProfileKind:
    """What the values mean, as Go names them."""

    sample_types: tuple[tuple[str, str], ...] = (("contentions", "count"),
                                                 ("delay", "nanoseconds"))
    period_type: tuple[str, str] = ("contentions", "count")
    period: int = 1
    default_sample_type: str = "delay"


GO_CONTENTION = ProfileKind()


class _Tables:
    """The profile's string, function and location tables, filled as samples come."""

    def __init__(self, prof: profile_pb2.Profile) -> None:
        self.prof = prof
        self.strings: dict[str, int] = {"": 0}
        prof.string_table.append("")
        self.functions: dict[str, int] = {}
        self.locations: dict[tuple[int, str], int] = {}

    def string(self, s: str) -> int:
        idx = self.strings.get(s)
        if idx is None:
            idx = self.strings[s] = len(self.strings)
            self.prof.string_table.append(s)
        return idx

    def location(self, mapping: int, frame: str) -> int:
        key = (mapping, frame)
        loc_id = self.locations.get(key)
        if loc_id is not None:
            return loc_id
        name = frame_function(frame)
        fn_key = f"{mapping}:{name}"
        fn_id = self.functions.get(fn_key)
        if fn_id is None:
            fn_id = self.functions[fn_key] = len(self.functions) + 1
            idx = self.string(name)
            self.prof.function.add(id=fn_id, name=idx, system_name=idx)
        loc_id = self.locations[key] = len(self.locations) + 1
        # distinct addresses keep distinct call sites apart in -raw and in readers that
        # key locations by address; the offset within the function is all that is known
        address = (mapping << 48) | (loc_id << 20) | (frame_offset(frame) & 0xFFFFF)
        self.prof.location.add(id=loc_id, mapping_id=mapping, address=address,
                               line=[profile_pb2.Line(function_id=fn_id)])
        return loc_id


def build_profile(samples: Samples, *, duration_ns: int, time_ns: int,
                  kind: ProfileKind = GO_CONTENTION,
                  comments: Iterable[str] = ()) -> profile_pb2.Profile:
    """The profile message of ``samples`` (zero-valued samples are left out)."""
    prof = profile_pb2.Profile()
    t = _Tables(prof)
    for typ, unit in kind.sample_types:
        prof.sample_type.add(type=t.string(typ), unit=t.string(unit))
    prof.period_type.type = t.string(kind.period_type[0])
    prof.period_type.unit = t.string(kind.period_type[1])
    prof.period = kind.period
    prof.default_sample_type = t.string(kind.default_sample_type)
    prof.duration_nanos = max(int(duration_ns), 0)
    prof.time_nanos = int(time_ns)
    for c in comments:
        prof.comment.append(t.string(c))
    prof.mapping.add(id=KERNEL_MAPPING, memory_start=0, memory_limit=(1 << 64) - 1,
                     filename=t.string("[kernel.kallsyms]"), has_functions=True)
    prof.mapping.add(id=USER_MAPPING, memory_start=0, memory_limit=(1 << 64) - 1,
                     filename=t.string("[user]"), has_functions=True)
    for (kstack, ustack, labels), (count, ns) in samples.items():
        if count <= 0 and ns <= 0:
            continue
        locs = [t.location(KERNEL_MAPPING, f) for f in kstack if f]
        locs += [t.location(USER_MAPPING, f) for f in ustack if f]
        if not locs:
            locs = [t.location(KERNEL_MAPPING, NO_STACK)]
        prof.sample.add(location_id=locs, value=[int(count), int(ns)],
                        label=[profile_pb2.Label(key=t.string(k), str=t.string(v))
                               for k, v in labels if v])
    return prof


def gzip_profile(prof: profile_pb2.Profile) -> bytes:
    """The bytes a /debug/pprof endpoint serves."""
    return gzip.compress(prof.SerializeToString(), compresslevel=6)
