"""Rich consoles for stdout and stderr, plain when not a terminal."""

from __future__ import annotations

import functools


@functools.cache
def stdout_console():
    from rich.console import Console

    return Console(highlight=False)


@functools.cache
def stderr_console():
    from rich.console import Console

    return Console(stderr=True, highlight=False)
