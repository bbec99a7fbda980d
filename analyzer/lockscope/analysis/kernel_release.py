"""The kernel a results document was recorded on, as the locking rules need it.

``host.kernel`` is ``uname -r`` of the sweep or attach (run/host.py); each trace also
carries the recorder's own ``kernel`` (docs/recorder-json.md). The locking rules
(analysis/rules.py) hold per kernel range, so the version picks which rule, and which
source, to cite. It is the one place lockscope reads a version: what the kernel did is
measured where the recorder can (the DIO writes' i_rwsem mode), and a measurement that
disagrees with the version's rule wins (analysis/rule_judge.py), since distributions
backport locking changes.
"""

from __future__ import annotations

import re

from ..schema import ResultsDoc

KernelVersion = tuple[int, int]


def parse_release(release: str | None) -> KernelVersion | None:
    """(major, minor) of a ``uname -r`` string such as "6.1.0-18-amd64", or None."""
    m = re.match(r"\s*(\d+)\.(\d+)", release or "")
    return (int(m[1]), int(m[2])) if m else None


def version_text(version: KernelVersion) -> str:
    return f"{version[0]}.{version[1]}"


def release_of(doc: ResultsDoc) -> str | None:
    """The document's kernel release: the host's, else the first trace's."""
    kernel = (doc.get("host") or {}).get("kernel")
    if kernel:
        return kernel
    traces = [(run.get("trace") or {}) for run in doc.get("runs") or []]
    traces.append((doc.get("window") or {}).get("trace") or {})
    return next((t["kernel"] for t in traces if t.get("kernel")), None)
