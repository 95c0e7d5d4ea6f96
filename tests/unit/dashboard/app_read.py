"""Read what a page drew back from an AppTest run: plotly figures (their JSON, as the browser gets it) and data
grids (frame, column labels, default columns). Independent of dashboard.charts / dashboard.ui: only the protos."""

from __future__ import annotations

import base64
import html
import json
from typing import Any

import numpy as np
import pandas as pd


def _find(node: Any, kind: str) -> list[Any]:
    out = []
    if getattr(node, "type", None) == kind:
        out.append(node)
    children = getattr(node, "children", None)
    if isinstance(children, dict):
        for c in children.values():
            out.extend(_find(c, kind))
    return out


def _arrays(node: Any) -> Any:
    """Plotly's typed-array encoding (``{"dtype": "i1", "bdata": <base64>}``, how plotly 6 writes a numpy array) ->
    a plain list, everywhere in ``node``."""
    if isinstance(node, dict):
        if set(node) >= {"dtype", "bdata"}:
            values = np.frombuffer(base64.b64decode(node["bdata"]), dtype=np.dtype(node["dtype"]))
            return values.reshape(node["shape"]).tolist() if "shape" in node and isinstance(node["shape"], list) \
                else values.tolist()
        return {k: _arrays(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_arrays(v) for v in node]
    return node


def figure(at, key: str) -> dict:
    """The plotly figure (dict) drawn in the container keyed ``key``, typed arrays decoded to lists."""
    found = _find(at.get_by_key(key), "plotly_chart")
    assert len(found) == 1, (key, found)
    return _arrays(json.loads(found[0].proto.spec))


def traces(fig: dict) -> dict[str, dict]:
    """Trace name (HTML entities decoded: the text plotly draws) -> trace."""
    return {html.unescape(t.get("name", "")): t for t in fig["data"]}


def ys(fig: dict) -> dict[str, list]:
    """Trace name -> its y values (bars of a horizontal trace: x)."""
    return {n: t["y"] for n, t in traces(fig).items()}


def xs(fig: dict) -> dict[str, list]:
    return {n: t["x"] for n, t in traces(fig).items()}


def table(at, key: str) -> pd.DataFrame:
    """The frame of the data grid keyed ``table-<key>``."""
    return at.get_by_key(f"table-{key}").dataframe[0].value


def labels(at, key: str) -> dict[str, str]:
    """Column name -> header label of the grid keyed ``table-<key>`` (its column config)."""
    cfg = json.loads(at.get_by_key(f"table-{key}").dataframe[0].proto.columns)
    return {name: c.get("label", name) for name, c in cfg.items()}


def shown(at, key: str) -> list[str]:
    """The grid's default columns, in order (all when it names none): its column order less its hidden columns."""
    df = at.get_by_key(f"table-{key}").dataframe[0]
    cfg = json.loads(df.proto.columns)
    order = list(df.proto.column_order) or list(df.value.columns)
    return [c for c in order if not cfg.get(c, {}).get("hidden")]


def hidden(at, key: str) -> list[str]:
    """The grid's hidden columns (reachable through its column menu)."""
    df = at.get_by_key(f"table-{key}").dataframe[0]
    cfg = json.loads(df.proto.columns)
    return [c for c in (list(df.proto.column_order) or list(df.value.columns)) if cfg.get(c, {}).get("hidden")]
