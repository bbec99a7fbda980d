"""A continuous attach under a steady load for a while, watched from outside: what
test_attach_soak.py (30 s) and bench/soak (30 min) measure. No tests here.

The load is fio: 4 threads of one process writing 4 KiB random O_DIRECT overwrites into
a written file on a loop ext4 (tests/support/record_common.py), for the whole run. lockscope
attach --continuous --pid <fio> --listen 127.0.0.1:PORT runs at its default budget
(--max-overhead 1 unless given). Once a second the harness scrapes /metrics itself and
reads the resident memory of lockscope and of its recorder (/proc/PID/status VmRSS).

Figures, over the steady part (after the first WARMUP of the run):
- RSS of each process: least-squares slope in MiB per hour, first and last value;
- map occupancy (lockscope_recorder_map_entries summed over the maps, and each map's):
  slope in entries per hour, first and last, and the capacity. A steady load's keys
  (lock, file, thread, stack) keep coming for a while at a falling rate (a spin wait
  in an interrupt carries the stack of whatever the interrupt stopped), so what counts
  is whether a map would fill before --rotate empties it;
- the recorder's BPF share of the CPUs (lockscope_recorder_cpu_share, each interval's):
  mean and the budget;
- gaps: the longest time without a new interval in the scraped series
  (lockscope_recorder_intervals_total), and scrapes that failed.
"""

from __future__ import annotations

import signal
import subprocess
import threading
import time
import urllib.request
from dataclasses import asdict, dataclass, field
from pathlib import Path

from lockscope_cli import LOCKSCOPE
from patience import patience
from record_common import prepare_file, start_fio, wait_threads

ROOT = Path(__file__).resolve().parents[2]
WARMUP = 0.25


@dataclass
class Series:
    t: list[float] = field(default_factory=list)
    v: list[float] = field(default_factory=list)

    def add(self, t: float, v: float | None) -> None:
        if v is not None:
            self.t.append(t)
            self.v.append(v)

    def steady(self, start: float) -> Series:
        keep = [(t, v) for t, v in zip(self.t, self.v) if t >= start]
        return Series([t for t, _ in keep], [v for _, v in keep])

    def slope_per_hour(self) -> float:
        n = len(self.t)
        if n < 2:
            return 0.0
        mt, mv = sum(self.t) / n, sum(self.v) / n
        den = sum((t - mt) ** 2 for t in self.t)
        return sum((t - mt) * (v - mv) for t, v in zip(self.t, self.v)) / den * 3600 \
            if den else 0.0


@dataclass
class MapFigures:
    first: float
    last: float
    slope_per_h: float
    capacity: float

    def entries_after(self, seconds: float) -> float:
        """The entries ``seconds`` on at the steady part's slope: an upper bound for
        keys that come at a falling rate."""
        return self.last + max(0.0, self.slope_per_h) * seconds / 3600


@dataclass
class SoakFigures:
    seconds: float
    scrapes: int
    failed_scrapes: int
    intervals: int
    longest_gap_s: float
    lockscope_rss_mib: tuple[float, float]
    lockscope_rss_slope_mib_per_h: float
    recorder_rss_mib: tuple[float, float]
    recorder_rss_slope_mib_per_h: float
    map_entries: tuple[float, float]
    map_capacity: float
    map_entries_slope_per_h: float
    maps: dict[str, MapFigures]
    bpf_share_mean: float
    budget_share: float
    observed_share: float       # observed seconds / window seconds, at the end
    pauses: int                 # --max-overhead pauses (core probes alone over)
    command: list[str]
    notes: list[str]            # what lockscope said of its recorder (restarts)

    def lines(self) -> list[str]:
        return [
            f"soak: {self.seconds:.0f} s, {self.intervals} intervals, {self.scrapes} scrapes "
            f"({self.failed_scrapes} failed), longest gap between new intervals "
            f"{self.longest_gap_s:.1f} s",
            f"lockscope RSS {self.lockscope_rss_mib[0]:.1f} -> "
            f"{self.lockscope_rss_mib[1]:.1f} MiB (slope {self.lockscope_rss_slope_mib_per_h:+.2f}"
            " MiB/h)",
            f"recorder RSS {self.recorder_rss_mib[0]:.1f} -> {self.recorder_rss_mib[1]:.1f} "
            f"MiB (slope {self.recorder_rss_slope_mib_per_h:+.2f} MiB/h)",
            f"map entries {self.map_entries[0]:.0f} -> {self.map_entries[1]:.0f} of "
            f"{self.map_capacity:.0f} (slope {self.map_entries_slope_per_h:+.1f}/h)",
            "  " + ", ".join(f"{k} {m.first:.0f} -> {m.last:.0f} of {m.capacity:.0f} "
                             f"({m.slope_per_h:+.0f}/h)" for k, m in sorted(self.maps.items())),
            f"BPF share of the CPUs: mean {self.bpf_share_mean:.2%}, budget "
            f"{self.budget_share:.2%}; observed {self.observed_share:.0%} of the time, "
            f"{self.pauses} pauses over the budget",
            "(slopes over the steady part, after the first "
            f"{WARMUP:.0%} of the run)",
            *self.notes,
        ]

    def as_dict(self) -> dict:
        return asdict(self)


def rss_mib(pid: int | None) -> float | None:
    if pid is None:
        return None
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                st = (entry / "stat").read_text()
            except OSError:
                continue
            if int(st.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry.name))
    return out


def recorders_of(pid: int) -> list[int]:
    """The lockscope-record processes that pid started (a child that exits meanwhile
    is left out)."""
    out = []
    for c in children(pid):
        try:
            if Path(f"/proc/{c}/comm").read_text().strip().startswith("lockscope-rec"):
                out.append(c)
        except OSError:
            continue
    return out


def recorder_of(pid: int) -> int | None:
    found = recorders_of(pid)
    return found[0] if found else None


MAP_SERIES = ("lockscope_recorder_map_entries", "lockscope_recorder_map_capacity")


def parse_metrics(text: str) -> dict[str, float]:
    """Sums of the few series the soak reads, and each map's entries and capacity
    (keyed "NAME.MAP")."""
    out: dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        name = line.split("{", 1)[0].split(" ", 1)[0]
        if name in ("lockscope_recorder_intervals_total", "lockscope_recorder_map_entries",
                    "lockscope_recorder_map_capacity", "lockscope_recorder_cpu_share",
                    "lockscope_recorder_budget_share", "lockscope_recorder_pauses_total",
                    "lockscope_recorder_observed_seconds_total",
                    "lockscope_recorder_window_seconds_total"):
            value = float(line.rsplit(" ", 1)[1])
            out[name] = out.get(name, 0.0) + value
            if name in MAP_SERIES and 'map="' in line:
                which = line.split('map="', 1)[1].split('"', 1)[0]
                out[f"{name}.{which}"] = value
    return out


def soak(seconds: float, work: Path, port: int, max_overhead: float | None = None,
         fio: str = "fio", say=lambda s: None) -> SoakFigures:
    """The run; ``work`` is a directory on the filesystem to load (ext4)."""
    path = work / "soak.dat"
    prepare_file(path, "overwrite", 128)
    load = start_fio(fio, path, "overwrite", 128, runtime=seconds + 120)
    cmd = LOCKSCOPE.argv + ["attach", "--continuous", "--pid", str(load.pid), "--listen",
                            f"127.0.0.1:{port}"]
    if max_overhead is not None:
        cmd += ["--max-overhead", f"{max_overhead:g}"]
    env = LOCKSCOPE.env()
    proc: subprocess.Popen | None = None
    notes: list[str] = []
    by_map: dict[str, Series] = {}
    capacities: dict[str, float] = {}
    try:
        wait_threads(load.pid, 5)
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                text=True, env=env)
        assert proc.stderr is not None
        said = []
        for line in proc.stderr:
            said.append(line)
            if "until SIGTERM or SIGINT" in line:
                break
        else:
            raise AssertionError(f"lockscope attach --continuous ended {proc.wait()}: "
                                 + "".join(said)[-2000:])
        # read what it says from now on too: a pipe nobody reads would stop lockscope
        # (and its recorder, which shares the pipe) once it holds 64 KiB
        later: list[str] = []
        reader = threading.Thread(target=lambda: later.extend(proc.stderr), daemon=True)
        reader.start()
        rec = recorder_of(proc.pid)
        say(f"soak: {seconds:.0f} s; lockscope pid {proc.pid}, recorder pid {rec}")
        own, recs, entries, share = Series(), Series(), Series(), Series()
        capacity = budget = observed = window = pauses = 0.0
        scrapes = failed = 0
        last_count, last_new, longest = -1.0, time.monotonic(), 0.0
        t0 = time.monotonic()
        while (now := time.monotonic()) - t0 < seconds:
            t = now - t0
            own.add(t, rss_mib(proc.pid))
            recs.add(t, rss_mib(rec))
            scrapes += 1
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics",
                                            timeout=patience(5)) as r:
                    m = parse_metrics(r.read().decode())
            except OSError:
                failed += 1
                m = {}
            count = m.get("lockscope_recorder_intervals_total")
            if count is not None and count > last_count:
                if last_count >= 0:
                    longest = max(longest, now - last_new)
                last_count, last_new = count, now
            entries.add(t, m.get("lockscope_recorder_map_entries"))
            for k, v in m.items():
                name, _, which = k.partition(".")
                if which and name == MAP_SERIES[0]:
                    by_map.setdefault(which, Series()).add(t, v)
                elif which and name == MAP_SERIES[1]:
                    capacities[which] = v
            share.add(t, m.get("lockscope_recorder_cpu_share"))
            capacity = m.get("lockscope_recorder_map_capacity", capacity)
            budget = m.get("lockscope_recorder_budget_share", budget)
            pauses = m.get("lockscope_recorder_pauses_total", pauses)
            observed = m.get("lockscope_recorder_observed_seconds_total", observed)
            window = m.get("lockscope_recorder_window_seconds_total", window)
            time.sleep(max(0.0, 1.0 - (time.monotonic() - now)))
        longest = max(longest, time.monotonic() - last_new)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=patience(120))
        reader.join(timeout=patience(10))
        notes = [line.rstrip("\n") for line in later if "recorder" in line]
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        load.send_signal(signal.SIGINT)
        try:
            load.wait(patience(20))
        except subprocess.TimeoutExpired:
            load.kill()
            load.wait()
    start = seconds * WARMUP
    o, r, e, s = own.steady(start), recs.steady(start), entries.steady(start), share.steady(start)
    return SoakFigures(
        seconds=seconds, scrapes=scrapes, failed_scrapes=failed, intervals=int(last_count),
        longest_gap_s=longest,
        lockscope_rss_mib=(o.v[0], o.v[-1]) if o.v else (0.0, 0.0),
        lockscope_rss_slope_mib_per_h=o.slope_per_hour(),
        recorder_rss_mib=(r.v[0], r.v[-1]) if r.v else (0.0, 0.0),
        recorder_rss_slope_mib_per_h=r.slope_per_hour(),
        map_entries=(e.v[0], e.v[-1]) if e.v else (0.0, 0.0), map_capacity=capacity,
        map_entries_slope_per_h=e.slope_per_hour(),
        maps={k: MapFigures(st.v[0], st.v[-1], st.slope_per_hour(), capacities.get(k, 0.0))
              for k, v in by_map.items() if (st := v.steady(start)).v},
        bpf_share_mean=sum(s.v) / len(s.v) if s.v else 0.0, budget_share=budget,
        observed_share=observed / window if window else 0.0, pauses=int(pauses),
        command=cmd, notes=notes)
