"""The service unit: systemd's own security analysis rates it 4.5 or less (from 9.6 for a
unit without restrictions), every capability it grants is one lockscope.capabilities
documents, and each restriction it cannot take is named in it with the reason."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from lockscope.capabilities import CAPABILITIES

from conftest import require_tool

UNIT = Path(__file__).resolve().parents[3] / "deploy" / "systemd" / "lockscope-attach.service"


def _setting(name: str) -> list[str]:
    text = UNIT.read_text().replace("\\\n", " ")
    return [m.group(1).strip() for m in re.finditer(rf"^{name}=(.*)$", text, re.M)]


def test_systemd_rates_the_unit_safe(tmp_path):
    analyze = require_tool("systemd-analyze")
    res = subprocess.run([analyze, "security", "--offline=yes", str(UNIT)],
                         capture_output=True, text=True, timeout=120)
    level = re.search(r"Overall exposure level for \S+: ([0-9.]+)", res.stdout)
    assert level, res.stdout + res.stderr
    assert float(level.group(1)) <= 4.5, res.stdout
    # and a unit without the restrictions rates far worse, as the scale says
    bare = tmp_path / "lockscope-attach.service"
    bare.write_text("[Service]\nExecStart=/usr/local/bin/lockscope attach\n")
    worse = subprocess.run([analyze, "security", "--offline=yes", str(bare)],
                           capture_output=True, text=True, timeout=120).stdout
    bare_level = re.search(r"Overall exposure level for \S+: ([0-9.]+)", worse)
    assert bare_level and float(bare_level.group(1)) > float(level.group(1)) + 4


def test_the_unit_grants_the_documented_capabilities_only():
    documented = {c.name for c in CAPABILITIES}
    for key in ("AmbientCapabilities", "CapabilityBoundingSet"):
        (value,) = _setting(key)
        assert set(value.split()) == documented, key
    assert _setting("NoNewPrivileges") == ["yes"]
    assert _setting("DynamicUser") == ["yes"]      # never root
    for name in ("PrivateUsers", "PrivateNetwork", "ProtectProc", "IPAddressAllow"):
        assert re.search(rf"^#\s+{name}(=\S*)?\s+\S", UNIT.read_text(), re.M), \
            f"{name}: not taken, and the unit does not say why"
