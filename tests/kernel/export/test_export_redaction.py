"""--redact-paths-outside on a live recording: DIO writers contend on a file of a real
ext4; the exporter process serves the file by name when its directory is kept, and as
``[redacted dev D ino N]`` with no trace of the path when it is not (the recording side
redacts before anything reaches the process that faces the network)."""

from __future__ import annotations

import os
import urllib.request

import pytest

from lockscope.export.exporter_link import ExporterLink
from lockscope.run.loopfs import make_loopfs

from conftest import require_kernel, require_tool
from export_recording import SeriesFollower, contention
from patience import patience
from prometheus_server import wait_for

pytestmark = pytest.mark.kernel


def _lock_series(link: ExporterLink) -> list[str]:
    text = urllib.request.urlopen(f"{link.url}/metrics", timeout=patience(10)).read().decode()
    return [line for line in text.splitlines()
            if line.startswith("lockscope_lock_wait_seconds_total{") and 'lock="i_rwsem"' in line]


def test_paths_outside_the_kept_directories_never_reach_the_exporter(tmp_path):
    require_kernel()
    require_tool("fio")
    fs = make_loopfs("ext4", size_bytes=1 << 30)
    kept = ExporterLink("127.0.0.1:0", top_files=10, redact_outside=[str(fs.path)])
    hidden = ExporterLink("127.0.0.1:0", top_files=10, redact_outside=[str(tmp_path)])
    try:
        for link in (kept, hidden):
            link.start()
        with contention(fs.path, tmp_path) as (path, series, start, finish):
            def both(iv):
                kept.add_interval(iv)
                hidden.add_interval(iv)

            with SeriesFollower(series, both):
                start()
                named = wait_for("the file's i_rwsem series, by name",
                                 lambda: _lock_series(kept), timeout=90)
                redacted = wait_for("the file's i_rwsem series, redacted",
                                    lambda: _lock_series(hidden), timeout=90)
                finish()
        st = os.stat(path)
        assert any(f'file="{path}"' in line for line in named), named
        assert all(str(fs.path) not in line for line in redacted), redacted
        assert any(f"ino {st.st_ino}]" in line and "[redacted dev " in line
                   for line in redacted), redacted
    finally:
        kept.stop()
        hidden.stop()
        fs.destroy()
