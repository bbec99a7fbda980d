"""Faults under ``lockscope attach --continuous``: the recorder killed, then the target
gone. /metrics never stops answering; the recorder's end shows as a restart counter
(lockscope_recorder_restarts{reason="ended"}) once it runs again, and the target's as
lockscope_target_up 0."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

from lockscope.run.continuous import RESTART_BACKOFF_S

from continuous_attach import free_port, get, metric, start_continuous, wait_metric
from patience import patience
from soak_harness import recorders_of

pytestmark = pytest.mark.kernel


def test_recorder_killed_then_target_gone_metrics_keep_answering(tmp_path):
    target = subprocess.Popen(["sh", "-c", f"while :; do echo x >> {tmp_path}/f; "
                               "sleep 0.05; done"])
    port = free_port()
    proc, err = start_continuous(["--pid", str(target.pid), "--interval", "1"], port)
    try:
        restarts = 'lockscope_recorder_restarts_total{reason="ended"}'
        wait_metric(port, "lockscope_recorder_restarts_total",
                    lambda m: any(lbl == restarts and v == 0 for lbl, v in m))
        first = recorders_of(proc.pid)
        assert len(first) == 1
        os.kill(first[0], signal.SIGKILL)
        # while it is down, and until it runs again, every scrape is answered
        deadline = time.monotonic() + patience(RESTART_BACKOFF_S * 3)
        seen = 0.0
        while time.monotonic() < deadline and seen < 1:
            status, body = get(f"http://127.0.0.1:{port}/metrics")
            assert status == 200
            seen = dict(metric(body.decode(), "lockscope_recorder_restarts_total")).get(
                restarts, 0.0)
            up = metric(body.decode(), "lockscope_target_up")
            assert up and up[0][1] == 1.0
            time.sleep(0.5)
        assert seen == 1, "".join(err)
        assert recorders_of(proc.pid) and recorders_of(proc.pid) != first
        target.kill()
        target.wait()
        wait_metric(port, "lockscope_target_up", lambda m: m and m[0][1] == 0.0)
        assert get(f"http://127.0.0.1:{port}/metrics")[0] == 200
        assert proc.poll() is None
        proc.send_signal(signal.SIGTERM)
        _, rest = proc.communicate(timeout=patience(120))
        assert proc.returncode == 0, "".join(err) + rest
        assert "Traceback" not in "".join(err) + rest
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if target.poll() is None:
            target.kill()
            target.wait()


def test_recorder_killed_under_a_bounded_attach(tmp_path):
    """attach --duration: the recorder killed is one line naming it and the signal,
    exit 1, and no recorder left."""
    from fault_harness import keep_line
    from lockscope_cli import LOCKSCOPE, says_window_open

    target = subprocess.Popen(["sh", "-c", f"while :; do echo x >> {tmp_path}/f; "
                               "sleep 0.05; done"])
    try:
        proc = LOCKSCOPE.start("attach", "--pid", str(target.pid), "--duration", "30",
                               "--out", str(tmp_path / "out"), "--no-report")
        assert proc.stderr is not None
        said = []
        for line in proc.stderr:  # until the window is open
            said.append(line)
            if says_window_open(line):
                break
        os.kill(recorders_of(proc.pid)[0], signal.SIGKILL)
        _, rest = proc.communicate(timeout=patience(60))
        err = "".join(said) + rest
    finally:
        target.kill()
        target.wait()
    assert proc.returncode == 1, err
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert last == "lockscope attach: lockscope-record killed by signal 9 (SIGKILL)", err
    keep_line(last)
    assert not recorders_of(proc.pid)
