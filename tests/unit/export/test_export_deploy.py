"""deploy/: the scrape config passes `promtool check config`; the alerting rules pass
`promtool check rules` and fire (and stay quiet) on the series `promtool test rules`
feeds them; the dashboard is Grafana JSON whose every panel has a query. Which metric
names they may use is checked against a real exposition in test_export_recorded.py."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from conftest import require_tool

DEPLOY = Path(__file__).resolve().parents[3] / "deploy"
RULES = DEPLOY / "prometheus" / "lockscope-alerts.yml"

RULE_TEST = Path(__file__).resolve().parents[2] / "data" / "lockscope_alerts_test.yml"


def test_rules_pass_promtool_check():
    promtool = require_tool("promtool")
    res = subprocess.run([promtool, "check", "rules", str(RULES)], capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "SUCCESS: 3 rules found" in res.stdout


def test_rules_fire_on_their_conditions():
    promtool = require_tool("promtool")
    res = subprocess.run([promtool, "test", "rules", str(RULE_TEST)], capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 0, res.stdout + res.stderr


def test_dashboard_is_grafana_json():
    dash = json.loads((DEPLOY / "grafana" / "lockscope-dashboard.json").read_text())
    assert dash["uid"] and dash["panels"]
    ids = [p["id"] for p in dash["panels"]]
    assert len(ids) == len(set(ids))
    for p in dash["panels"]:
        assert p["targets"] and all(t["expr"].strip() for t in p["targets"]), p["title"]
        assert p["datasource"]["uid"] == "${datasource}"


def test_scrape_config_passes_promtool_check_config():
    promtool = require_tool("promtool")
    res = subprocess.run([promtool, "check", "config",
                          str(DEPLOY / "prometheus" / "lockscope-scrape.yml")],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "SUCCESS: 3 rules found" in res.stdout   # it loads the alert rules beside it
