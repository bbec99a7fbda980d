"""Shared reading of text reports made of ``label: value`` lines."""

from __future__ import annotations

import re

from .throughput import ToolOutputError

NUMBER = r"([0-9]+(?:\.[0-9]+)?)"


def find_number(tool: str, lines: list[str], label: str, what: str, between: str = r"\s*",
                required: bool = True) -> float | None:
    """The number after ``label`` (a regex), past ``between`` (a regex), on the first line
    that has the label. A label without a number is an error naming that line."""
    label_rx = re.compile(label)
    value_rx = re.compile(label + between + NUMBER)
    for i, line in enumerate(lines, 1):
        if not label_rx.search(line):
            continue
        m = value_rx.search(line)
        if not m:
            raise ToolOutputError(tool, f"{what} is not a number here", i, line)
        return float(m.group(1))
    if required:
        raise ToolOutputError(tool, f"no {what} in the output ({len(lines)} lines)")
    return None
