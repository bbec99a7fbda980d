"""Command templates: ``{field}`` placeholders filled at each point, checked up front.

Fields (values are shell-quoted when substituted):

- ``{threads}``: the point's thread count;
- ``{runtime}``: the timed phase in whole seconds (at least 1);
- ``{dir}``: the fresh directory the sweep made on the filesystem under test;

and with ``--per-thread`` (one process per writer, ``{threads}`` of them):

- ``{thread}``: the writer's index, 0 .. threads-1;
- ``{part_blocks}`` / ``{part_offset}``: the writer's share of the ``--span`` region and
  where it starts, in ``--block-size`` units (dd's ``count=`` and ``seek=``);
- ``{part_bytes}`` / ``{part_offset_bytes}``: the same in bytes (fio's ``size=`` and
  ``offset=``).
"""

from __future__ import annotations

import math
import shlex
import string
from dataclasses import dataclass
from pathlib import Path

from ...errors import UsageError

POINT_FIELDS = ("threads", "runtime", "dir")
THREAD_FIELDS = ("thread", "part_blocks", "part_offset", "part_bytes", "part_offset_bytes")


def template_fields(text: str, option: str) -> list[str]:
    """Names of the fields in ``text``, parsed by string.Formatter; a malformed
    template is a UsageError."""
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as exc:
        raise UsageError(f"{option}: {exc} in '{text}' (write {{{{ and }}}} for braces)") \
            from None
    names = []
    for _literal, name, spec, conversion in parsed:
        if name is None:
            continue
        if not name.isidentifier():
            raise UsageError(f"{option}: '{{{name}}}' is not a field name in '{text}'")
        if spec or conversion:
            raise UsageError(f"{option}: field '{{{name}}}' takes no format or conversion")
        names.append(name)
    return names


def check_template(text: str, option: str, per_thread: bool) -> None:
    """Refuse unknown fields (and per-thread fields without --per-thread)."""
    if not text.strip():
        raise UsageError(f"{option}: empty command")
    known = POINT_FIELDS + (THREAD_FIELDS if per_thread else ())
    for name in template_fields(text, option):
        if name in THREAD_FIELDS and not per_thread:
            raise UsageError(f"{option}: field '{{{name}}}' needs --per-thread")
        if name not in known:
            raise UsageError(f"{option}: unknown field '{{{name}}}' (known: "
                             + ", ".join("{" + k + "}" for k in known) + ")")


@dataclass(frozen=True)
class Split:
    """How --per-thread writers share a region: bytes, in units of ``block`` bytes."""

    span_bytes: int
    block_bytes: int

    def part(self, index: int, count: int) -> dict[str, int]:
        blocks = self.span_bytes // self.block_bytes // count
        return {"thread": index, "part_blocks": blocks, "part_offset": index * blocks,
                "part_bytes": blocks * self.block_bytes,
                "part_offset_bytes": index * blocks * self.block_bytes}


def render(text: str, threads: int, runtime_s: float, workdir: Path,
           part: dict[str, int] | None = None) -> str:
    """The command line of one point (of one writer, with ``part``)."""
    values: dict[str, object] = {"threads": threads, "runtime": max(1, math.ceil(runtime_s)),
                                 "dir": workdir, **(part or {})}
    return string.Formatter().vformat(
        text, (), {k: shlex.quote(str(v)) for k, v in values.items()})
