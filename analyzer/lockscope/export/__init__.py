"""lockscope's exporter: Prometheus metrics and Go-style pprof profiles of a continuous
recording, served over HTTP.

Interface (the recording side calls it; everything else is internal)::

    from lockscope.export import ExportServer, ExportState

    state = ExportState(top_files=50)          # window_s=300: ?seconds=N at most this
    server = ExportServer.bind("127.0.0.1:9433", state)   # UsageError: bad address,
    server.start()                                         # port in use (nothing bound)
    for interval in drained_intervals:         # one recorder `series` object each
        state.add_interval(interval)           # (docs/recorder-json.md), one thread
    state.set_context(target_up=True, target="comm=mariadbd", max_overhead_pct=1,
                      duty_pct=40, drops={"map_full": 0},
                      map_occupancy={"offcpu": (812, 16384)},
                      db_engine="mariadb", db_commits=123456,
                      file_roles={"/var/lib/mysql/ib_logfile0": "redo_log"},
                      pg_names={(16384, 16397): "pgbench_accounts"})
    server.stop()                              # idempotent; ends requests in flight

``set_context`` takes any subset of those keys, whenever they change (``drops`` (the
recorder's ``drops`` object) and ``db_commits`` are cumulative as their sources count
them; a source's restart is absorbed). An interval that carries the recorder's
``state`` (maps in use, drops, sampling) sets ``map_occupancy``, ``drops`` and
``duty_pct`` itself. ``ExportServer.bind`` accepts ``[HOST:]PORT``, ``[V6]:PORT``, ``:PORT``;
the host defaults to 127.0.0.1; port 0 picks a free port (``server.listen.port``).

Served: ``/metrics`` (Prometheus text 0.0.4, or OpenMetrics when the Accept header
asks; gzip when accepted), ``/debug/pprof/mutex`` and ``/debug/pprof/block``
(gzip'd pprof, ``?seconds=N`` for the last N seconds), ``/`` (a page with the live
per-interval lines and links). docs/fleet.md documents the metrics and profiles.

Modules: interval_digest (one interval → samples and figures), file_ranking (top-N
file labels), export_state (cumulative state and snapshots), pprof_writer and
profile_windows (profiles), metrics_registry (the Prometheus collector),
listen_address, live_page, export_server. The pprof message is compiled from
profile.proto by ``make proto``.

``attach --continuous`` does not serve in its own process: exporter_link (the recording
side) binds the socket, reads --web-config (web_config) and starts exporter_process,
which drops every privilege (privilege_drop) and runs ExportServer with TLS and basic
auth (basic_auth); paths outside --redact-paths-outside are redacted (path_redaction)
before they are sent. exporter_metrics: the exporter's own refusals and restarts.
"""

from .export_server import ExportServer
from .export_state import ExportSnapshot, ExportState

__all__ = ["ExportServer", "ExportSnapshot", "ExportState"]
