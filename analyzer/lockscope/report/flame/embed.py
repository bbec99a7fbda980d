"""A drawn flame graph as the HTML page carries it: made safe inside an iframe,
gzip-compressed and base64-encoded, with its height for the frame.

The drawing threads pack each graph as soon as inferno has drawn it (zlib lets
other threads run meanwhile), so the page is written without waiting for it.
"""

from __future__ import annotations

import base64
import gzip
import re
from pathlib import Path

_HEIGHT = re.compile(rb'<svg[^>]*?\sheight="(\d+(?:\.\d+)?)"', re.S)
DEFAULT_HEIGHT = 600

# inferno saves zoom/search state with history.replaceState, which an embedded
# data: document may not do (it throws a SecurityError). Guard that one call.
_REPLACE = "history.replaceState("
_GUARD = ("function lockscopeReplaceState(a, b, c) { try { history.replaceState(a, b, c); } "
          "catch (e) { /* embedded: no URL state */ } }\n")


# A frame laid out at zero width (a closed section, a resize while printing or
# taking a screenshot) would make inferno compute negative widths and infinite
# text positions, and log errors: skip such layouts; the next resize redraws.
_RESIZE = "var update_for_width_change = function() {"
_RESIZE_SAFE = _RESIZE + " if (!(svg.width.baseVal.value > xpad * 2)) { return; }"


def flame_for_embedding(svg: str) -> str:
    """inferno's SVG made safe inside an iframe: guarded URL state, no zero-width layout."""
    svg = svg.replace(_RESIZE, _RESIZE_SAFE, 1)
    if _REPLACE not in svg:
        return svg
    svg = svg.replace(_REPLACE, "lockscopeReplaceState(")
    # Define the guard at the top of inferno's first script block.
    return svg.replace("<![CDATA[", "<![CDATA[\n" + _GUARD, 1)


def packed(svg: str) -> str:
    """gzip + base64 of an SVG document, as the page's script unpacks it."""
    # mtime=0: the same input gives the same report, byte for byte.
    return base64.b64encode(gzip.compress(svg.encode("utf-8"), compresslevel=6, mtime=0)
                            ).decode("ascii")


def embedding(svg_path: Path) -> tuple[int, str]:
    """(height of the frame in pixels, packed SVG) of a drawn flame graph."""
    raw = svg_path.read_bytes()
    m = _HEIGHT.search(raw[:4096])
    height = int(float(m.group(1))) + 4 if m else DEFAULT_HEIGHT
    return height, packed(flame_for_embedding(raw.decode("utf-8", "replace")))
