"""SIGINT and SIGTERM held back while a child is started and its handle stored.

Python raises KeyboardInterrupt at the next bytecode after the signal: inside
subprocess.Popen() that can be after the fork and before the handle is returned, and a
child nobody holds is a child nobody stops (a recorder left loading its probes, an
engine left laying out its file). Held for the few milliseconds of a start only.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

HELD = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def interrupts_held() -> Iterator[None]:
    """Signals that arrive inside the block are delivered, in order, when it ends
    (only the main thread receives Python's signals; elsewhere nothing is held)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = {sig: signal.signal(sig, lambda signum, _frame: caught.append(signum))
                for sig in HELD}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for signum in caught:
            handler = previous[signal.Signals(signum)]
            if callable(handler):
                handler(signum, None)
            elif handler == signal.SIG_DFL:
                signal.raise_signal(signum)
