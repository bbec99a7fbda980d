"""The sweep report on io-wq's hashed queue (tests/support/iouring_sweep_docs.py): the
verdict's label, the rule that fired with its range, the remedy, the line in request
time; not measured said as such."""

from __future__ import annotations

from iouring_sweep_docs import doc, run

from lockscope.analysis import analyze
from lockscope.report.markdown import render_markdown
from lockscope.report.model import build_model

KERNEL = "6.1.0-56-amd64"


def markdown(tmp_path, shares, **kw) -> str:
    d = doc([run(n, 2000, s, KERNEL, **kw) for n, s in zip((1, 2, 4), shares)], KERNEL)
    d["analysis"] = analyze(d)
    return render_markdown(build_model(d), [], None, tmp_path)


def test_the_report_names_io_wq_with_the_rule_of_the_kernel(tmp_path):
    md = markdown(tmp_path, (0.9, 0.93, 0.95))
    assert "### ext4: io_uring writes serialized in io-wq" in md
    assert "io-wq runs the file's writes one at a time" in md     # because
    assert "kernels < 6.4" in md and "io_prep_async_work()" in md
    assert "a kernel upgrade removes this" in md
    assert "io-wq's hashed queue at 4 threads:" in md and "95% of request time" in md


def test_the_report_says_not_measured(tmp_path):
    md = markdown(tmp_path, (0.9, 0.93, 0.95), measured=False)
    assert "io-wq's hashed queue at 4 threads: not measured (the io_uring group is off)" in md
    assert "io_uring writes serialized" not in md
