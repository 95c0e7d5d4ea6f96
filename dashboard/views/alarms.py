"""Alarms: each alarm definition of the stack and its backtest on the data being browsed.

Uses the alarms API (``from alarms import load_config, build_catalogue, run_backtest``);
when that part is not installed or fails, the page says so instead of failing.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from dashboard import ui
from dashboard.constants import ENV_ALARMS_CONFIG

TITLE = "Alarms"
STATES = ("ALARM", "OK", "INSUFFICIENT_DATA")
_STATE_Y = {"OK": 0, "INSUFFICIENT_DATA": 1, "ALARM": 2}
_col = st.column_config
# explicit widths: alarm, severity, state and when it fired fit a 1400 px window without horizontal scrolling
SUMMARY_COLUMN_CONFIG = {
    "alarm": _col.TextColumn("alarm", width=260),
    "severity": _col.TextColumn("severity", width=65),
    "last state": _col.TextColumn("last state", width=130),
    "ALARM intervals": _col.NumberColumn("ALARM intervals", width=105),
    "first ALARM": _col.DatetimeColumn("first ALARM (UTC)", format="YYYY-MM-DD HH:mm", width=140),
    "periods in ALARM": _col.NumberColumn("ALARM periods", width=95),
    "periods OK": _col.NumberColumn("OK periods", width=80),
    "periods INSUFFICIENT_DATA": _col.NumberColumn("no-data periods", width=105,
                                                   help="Periods in INSUFFICIENT_DATA."),
    "backtest": _col.TextColumn("backtest", width=70),
}
DEFINITION_COLUMN_CONFIG = {
    "alarm": _col.TextColumn("alarm", width=260),
    "title": _col.TextColumn("title", width=200),
    "severity": _col.TextColumn("severity", width=65),
    "target": _col.TextColumn("target", width=120),
    "condition": _col.TextColumn("condition", width=250),
}


def alarms_api() -> tuple[Any, Any, Any] | None:
    """(load_config, build_catalogue, run_backtest) or None when the alarms part is unavailable."""
    try:
        from alarms import build_catalogue, load_config, run_backtest
    except ImportError:
        return None
    return load_config, build_catalogue, run_backtest


def default_config() -> Path | None:
    """``$IDEMWATCH_ALARMS_CONFIG``, else the demo stack shipped in the alarms package."""
    env = os.environ.get(ENV_ALARMS_CONFIG)
    if env:
        return Path(env)
    try:
        import alarms
    except ImportError:
        return None
    for base in {Path(p) for p in getattr(alarms, "__path__", [])}:
        for ext in ("yaml", "yml", "json", "toml"):
            p = base / f"demo-stack.{ext}"
            if p.is_file():
                return p
    return None


@lru_cache(maxsize=8)
def _backtest(config: str, config_mtime: int, data_dir: str, fingerprint: str):
    load_config, build_catalogue, run_backtest = alarms_api()  # type: ignore[misc]
    defs = build_catalogue(load_config(Path(config)))
    return list(defs), list(run_backtest(defs, Path(data_dir)))


def describe(definition: Any) -> dict[str, Any]:
    """The definitions-table row of one ``alarms.AlarmDefinition``."""
    cond = definition.condition() if callable(getattr(definition, "condition", None)) else ""
    return {
        "alarm": _name(definition),
        "title": getattr(definition, "title", ""),
        "severity": _val(getattr(definition, "severity", "")),
        "target": getattr(definition, "target", ""),
        "condition": cond,
        "treat missing data": _val(getattr(definition, "treat_missing_data", "")),
        "why": getattr(definition, "treat_missing_reason", ""),
        "description": getattr(definition, "description", ""),
    }


def _val(v: Any) -> Any:
    return v.value if hasattr(v, "value") else v


def _name(definition: Any) -> str:
    for attr in ("name", "alarm_name"):
        v = getattr(definition, attr, None)
        if v:
            return str(v)
    return str(definition)


def summary(results: list) -> pd.DataFrame:
    """One row per alarm: name, severity, state in the last period, ALARM intervals and the first one,
    periods per state, backtest status and note (e.g. why a metric cannot be rebuilt from the tables).
    Most telling columns first: they stay visible without horizontal scrolling."""
    rows = []
    for r in results:
        tl = r.timeline
        n = len(tl) if tl is not None else 0
        counts = tl["state"].value_counts() if n else pd.Series(dtype=int)
        rows.append({
            "alarm": _name(r.definition),
            "severity": _val(getattr(r.definition, "severity", "")),
            "last state": str(tl["state"].iloc[-1]) if n else "INSUFFICIENT_DATA",
            "ALARM intervals": len(r.alarm_intervals),
            "first ALARM": r.alarm_intervals[0][0] if r.alarm_intervals else None,
            "periods in ALARM": int(counts.get("ALARM", 0)),
            "periods OK": int(counts.get("OK", 0)),
            "periods INSUFFICIENT_DATA": int(counts.get("INSUFFICIENT_DATA", 0)),
            "backtest": getattr(r, "status", "ok"),
            "note": getattr(r, "note", ""),
        })
    return pd.DataFrame(rows)


def render() -> None:
    ctx = ui.context()
    ds, f = ctx.ds, ctx.filters
    ui.page_header(TITLE, "Each CloudWatch alarm of the stack backtested on the collected history: per period the "
                          "statistic, the M-out-of-N datapoints-to-alarm rule and the treat-missing-data choice. The backtest "
                          "covers the whole collected history (the time filter does not apply here).")
    api = alarms_api()
    if api is None:
        st.info("The alarms part is not installed in this environment, so alarm definitions and backtests are not "
                "available. Once it is, this page shows each alarm's state and backtest timeline; from the CLI: "
                "`idemwatch alarms backtest --config FILE --data DIR`.")
        ui.footer(TITLE)
        return
    default = default_config()
    cfg = st.text_input("Alarm stack config", value=str(default) if default else "", key="alarm_cfg")
    if not cfg:
        st.info("No alarm stack config found; enter the path of one (see `idemwatch alarms --help`).")
        ui.footer(TITLE)
        return
    p = Path(cfg)
    if not p.is_file():
        st.error(f"Config file not found: {ui.md_escape(cfg)}")
        ui.footer(TITLE)
        return
    try:
        defs, results = _backtest(str(p.resolve()), p.stat().st_mtime_ns, str(ds.data_dir), ds.fingerprint)
    except Exception as exc:  # noqa: BLE001 - the alarms part raises its own errors for bad configs: show them
        st.error(f"Backtest failed: {ui.md_escape(type(exc).__name__)}: {ui.md_escape(exc)}")
        ui.footer(TITLE)
        return
    s = summary(results)
    c0, c1, c2, c3 = st.columns(4)
    c0.metric("Backtested", f"{int((s['backtest'] == 'ok').sum()) if len(s) else 0:,}")
    c1.metric("Alarms", f"{len(defs):,}")
    c2.metric("In ALARM at the end", f"{int((s['last state'] == 'ALARM').sum()) if len(s) else 0:,}")
    c3.metric("Alarms that fired", f"{int((s['ALARM intervals'] > 0).sum()) if len(s) else 0:,}")
    st.subheader("State and backtest")
    ui.table(s, key="alarm_summary", **SUMMARY_COLUMN_CONFIG)
    if results:
        names = [_name(r.definition) for r in results]
        fired = [i for i, r in enumerate(results) if r.alarm_intervals]
        pick = st.selectbox("Timeline of", range(len(results)), index=fired[0] if fired else 0,
                            format_func=lambda i: names[i], key="alarm_pick")
        _timeline(results[pick], f)
    st.subheader("Definitions")
    ui.table(pd.DataFrame([describe(d) for d in defs]), key="alarm_defs", **DEFINITION_COLUMN_CONFIG)
    ui.footer(TITLE)


def _timeline(result: Any, f) -> None:
    import plotly.graph_objects as go

    tl = result.timeline
    if tl.empty:
        st.caption("Empty timeline (no periods in the collected data).")
        return
    t = pd.to_datetime(tl["period_start"], utc=True).dt.tz_localize(None)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=ui._py(t), y=ui._py(tl["value"]), name="value", mode="lines+markers"))
    for a, b in result.alarm_intervals:
        fig.add_vrect(x0=pd.Timestamp(a).tz_localize(None) if pd.Timestamp(a).tzinfo else pd.Timestamp(a),
                      x1=pd.Timestamp(b).tz_localize(None) if pd.Timestamp(b).tzinfo else pd.Timestamp(b),
                      fillcolor="red", opacity=0.15, line_width=0)
    fig.add_trace(go.Scatter(x=ui._py(t), y=[_STATE_Y.get(str(s), None) for s in tl["state"]], name="state",
                             mode="lines", line_shape="hv", yaxis="y2"))
    fig.update_layout(height=340, margin={"l": 10, "r": 10, "t": 10, "b": 10}, xaxis_title="period start (UTC)",
                      yaxis={"title": "value"},
                      yaxis2={"overlaying": "y", "side": "right", "tickvals": [0, 1, 2],
                                  "ticktext": ["OK", "INSUFFICIENT_DATA", "ALARM"], "range": [-0.2, 2.2]})
    ui.chart(fig, key="alarm_timeline")
    st.caption("Red bands: intervals in ALARM.")
