"""Metrics about the exporter itself: requests it refused and why, whether the last
reload of --web-config worked, and how often its process was started again."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from .export_state import ExportSnapshot


def exporter_metrics(s: ExportSnapshot) -> Iterator[Metric]:
    c = s.context
    if c.http_refused:
        refused = CounterMetricFamily(
            "lockscope_http_refused", "Requests and connections the exporter refused, by "
            "reason (tls_handshake: no TLS, no or a wrong client certificate, or a stall; "
            "basic_auth: wrong or no credentials; password_checks_refused: answered 429 "
            "because password checks reached their CPU bound)", labels=["reason"])
        for reason, n in sorted(c.http_refused.items()):
            refused.add_metric([reason], n)
        yield refused
    if c.web_config_ok is not None:
        yield GaugeMetricFamily("lockscope_web_config_last_reload_successful",
                                "1 when the last reload of --web-config succeeded (else "
                                "the last good configuration is still served)",
                                value=1.0 if c.web_config_ok else 0.0)
    if c.exporter_restarts is not None:
        yield CounterMetricFamily("lockscope_exporter_restarts", "Times the exporter's "
                                  "process was started again after it ended",
                                  value=c.exporter_restarts)
