"""sweep --job reads a fio job file through lockscope-load's own parser (--parse-only):
[global] then the first job section, option names as the engine knows them, the
sweep's per-point options left out, and the parser's own one-line error."""

from __future__ import annotations

import pytest

from lockscope.errors import UsageError
from lockscope.run.scenarios import scenario_from_job_file


def test_global_then_first_job_as_the_engine_parses_them(tmp_path):
    job = tmp_path / "two.fio"
    job.write_text("; comment\n[global]\nreadwrite=randwrite\nbs=4k\ndirect=1\nnumjobs=8\n"
                   "runtime=30\ntime_based\nfilename=/elsewhere/f\n\n"
                   "[first]\nbs=16k\niodepth=4\nioengine=libaio\n\n[second]\nbs=1m\n")
    sc = scenario_from_job_file(str(job))
    assert sc.name == "two"
    # readwrite is fio's alias of rw; the later section's bs and the per-point keys are not
    assert sc.job == {"rw": "randwrite", "bs": "16k", "direct": "1", "iodepth": "4",
                      "ioengine": "libaio"}


@pytest.mark.parametrize("text, says", [
    ("[w]\nbogus=1\n", "unknown option 'bogus'"),
    ("[global]\nrw=write\n", "no job defined"),
    ("[w]\nbs=4x\n", "bs"),
])
def test_a_bad_job_file_is_the_parsers_one_line(tmp_path, text, says):
    job = tmp_path / "bad.fio"
    job.write_text(text)
    with pytest.raises(UsageError) as err:
        scenario_from_job_file(str(job))
    assert says in str(err.value) and "\n" not in str(err.value)
    assert str(err.value).startswith(f"{job}: not a fio job file: ")
