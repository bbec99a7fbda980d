"""The kernel matrix's judge sets what a guest's tests found of its kernel against the
kernel's expectation (tools/kernels/judge.py, expectations.py): io_uring's hashing of
O_DIRECT writes to ext4, and the io_uring sweep's verdict naming io-wq."""

from __future__ import annotations

import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT / "tools" / "kernels"))

from expectations import EXPECTED  # noqa: E402
from judge import TESTS, guest_findings, io_wq_hashed, judge, stopped_midway  # noqa: E402

PASSED = {"ok": True, "detail": "passed"}


def test_the_finding_must_be_the_kernels(tmp_path):
    (tmp_path / "findings").write_text('io_wq_hashed\tyes\nio_wq_hashed_figures\t{"a": 1}\n')
    found = guest_findings(tmp_path)
    assert found == {"io_wq_hashed": "yes", "io_wq_hashed_figures": '{"a": 1}'}
    assert io_wq_hashed(PASSED, found["io_wq_hashed"], True)["ok"]
    wrong = io_wq_hashed(PASSED, found["io_wq_hashed"], False)
    assert not wrong["ok"] and "expected no" in wrong["detail"]


def test_no_finding_fails_where_one_is_expected_and_a_failed_test_stays_failed(tmp_path):
    assert guest_findings(tmp_path) == {}
    assert not io_wq_hashed(PASSED, None, True)["ok"]
    failed = {"ok": False, "detail": "failed"}
    assert io_wq_hashed(failed, "yes", True) is failed
    assert io_wq_hashed(PASSED, None, None) is PASSED     # not checked on this kernel


def test_the_kernels_say_which_hash():
    assert EXPECTED["6.1.0-56-amd64"].io_wq_hashed is True
    assert EXPECTED["6.12.117+deb12-amd64"].io_wq_hashed is False


def test_the_sweep_must_measure_io_wq_where_the_kernel_hashes(tmp_path):
    (tmp_path / "release").write_text("6.1.0-56-amd64\n")
    (tmp_path / "junit.xml").write_text(
        '<testsuite><testcase name="test_the_recorded_io_wq_hash_decides_the_verdict"/>'
        '</testsuite>')
    assert TESTS["test_the_recorded_io_wq_hash_decides_the_verdict"] == "sweep_io_wq_hashed"
    (tmp_path / "findings").write_text('sweep_io_wq_hashed\tno\nsweep_io_wq_figures\t{"b": 2}\n')
    check = judge(tmp_path, {})["checks"]["sweep_io_wq_hashed"]
    assert not check["ok"] and "hashed: no (expected yes)" in check["detail"]
    assert '{"b": 2}' in check["detail"]
    (tmp_path / "findings").write_text('sweep_io_wq_hashed\tyes\nsweep_io_wq_figures\t{"c": 3}\n')
    check = judge(tmp_path, {})["checks"]["sweep_io_wq_hashed"]
    assert check["ok"] and '{"c": 3}' in check["detail"]
    (tmp_path / "release").write_text("6.12.117+deb12-amd64\n")
    assert not judge(tmp_path, {})["checks"]["sweep_io_wq_hashed"]["ok"]


def test_a_guest_that_stopped_says_where(tmp_path):
    (tmp_path / "release").write_text("6.1.0-56-amd64\n")
    (tmp_path / "steps").write_text("modprobe 0 2.5\ninstall 0 30\ndoctor 0 17.5\n")
    (tmp_path / "pytest.out").write_text(
        "tests/kernel/a.py::test_one PASSED   [ 50%]\ntests/kernel/b.py::test_two[x] ")
    (tmp_path / "console").write_text("vng: booting\n[  12.5] loop: module loaded\n"
                                      "[ 901.25] EXT4-fs (loop1): mounted\nqemu: terminating\n")
    detail = judge(tmp_path, {})["checks"]["guest_ran"]["detail"]
    assert stopped_midway(tmp_path) == detail   # booted once more, saying why
    assert "stopped in step pytest (at tests/kernel/b.py::test_two[x])" in detail
    assert "50 s of steps done" in detail
    assert detail.endswith("console's last kernel line: [ 901.25] EXT4-fs (loop1): mounted")
    (tmp_path / "steps").write_text("modprobe 0 2.5\n")
    (tmp_path / "console").unlink()
    detail = judge(tmp_path, {})["checks"]["guest_ran"]["detail"]
    assert "stopped in step install, 2 s of steps done; no console" in detail


def test_a_guest_with_an_oops_or_all_its_steps_is_not_booted_again(tmp_path):
    (tmp_path / "steps").write_text("modprobe 0 2.5\n")
    (tmp_path / "console").write_text("[ 3.0] BUG: kernel NULL pointer dereference\n")
    assert stopped_midway(tmp_path) is None
    assert "BUG: kernel NULL" in judge(tmp_path, {})["checks"]["guest_ran"]["detail"]
    (tmp_path / "console").write_text("[ 3.0] loop: module loaded\n")
    (tmp_path / "steps").write_text("modprobe 0 2.5\ndone\n")
    assert stopped_midway(tmp_path) is None
