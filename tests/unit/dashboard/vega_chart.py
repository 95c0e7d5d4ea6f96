"""Read a drawn Vega-Lite chart back from an AppTest run: its spec and the rows Streamlit sends as Arrow."""

from __future__ import annotations

import json

import pandas as pd
import pyarrow as pa


def read(at, key: str) -> tuple[dict, pd.DataFrame]:
    """(spec, rows) of the one ``st.vega_lite_chart`` inside the container keyed ``key``."""
    block = at.get_by_key(key)
    charts = [c for c in block.children.values() if getattr(c, "type", None) == "vega_lite_chart"]
    assert len(charts) == 1, [getattr(c, "type", None) for c in block.children.values()]
    proto = charts[0].proto
    rows = pa.ipc.open_stream(proto.data.data).read_pandas() if proto.data.data else pd.DataFrame()
    return json.loads(proto.spec), rows


def layers(spec: dict) -> list[dict]:
    """Every single view of ``spec`` (layers and concatenated views, depth first)."""
    out = []
    for v in [spec, *spec.get("layer", []), *spec.get("vconcat", [])]:
        if v is not spec and ("layer" in v or "vconcat" in v):
            out.extend(layers(v))
        elif "mark" in v:
            out.append(v)
    return out


def series(rows: pd.DataFrame, value: str = "value", **where) -> dict[str, list]:
    """Series name -> its values in time order (rows matching ``where`` column=value)."""
    for k, v in where.items():
        rows = rows[rows[k] == v]
    rows = rows.sort_values("t")
    return {str(name): g[value].tolist() for name, g in rows.groupby("series", sort=True)}


def utc_ms(text: str) -> float:
    """``YYYY-MM-DD HH:MM`` (UTC) -> epoch ms, independently of the dashboard's code."""
    from datetime import UTC, datetime

    return datetime.strptime(text, "%Y-%m-%d %H:%M").replace(tzinfo=UTC).timestamp() * 1000


def domain_ms(scale: dict) -> list[float]:
    """A temporal scale's domain (Vega-Lite DateTime objects marked UTC) as epoch ms."""
    from datetime import UTC, datetime

    out = []
    for d in scale["domain"]:
        assert d["utc"] is True, d
        out.append(datetime(d["year"], d["month"], d["date"], d["hours"], d["minutes"], d["seconds"],
                            d["milliseconds"] * 1000, tzinfo=UTC).timestamp() * 1000)
    return out
