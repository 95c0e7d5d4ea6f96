"""Alarms: each alarm definition of the stack (every tier, custom alarms) and its backtest on the data.

Uses the alarms API (``from alarms import load_config, build_catalogue, run_backtest``);
when that part is not installed or fails, the page says so instead of failing.

The "Alarm stack config" box reads server files, so it only opens a path whose real location
(symlinks resolved) is inside the allowed roots (:func:`allowed_roots`: the data directory, the
folder of ``$IDEMWATCH_ALARMS_CONFIG``, the stack configs shipped in ``alarms/``), with a config
suffix. Any other path, existing or not, gets the same message, so the box cannot be used to
probe the file system; errors never show file contents.
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from dashboard import charts, ui
from dashboard.cache import answer
from dashboard.constants import ENV_ALARMS_CONFIG

TITLE = "Alarms"
CONFIG_SUFFIXES = (".yaml", ".yml", ".json")
NOT_ALLOWED = ("Not an allowed alarm stack config. Give a .yaml, .yml or .json file inside the data directory or "
               "the config folder the dashboard was started with ($IDEMWATCH_ALARMS_CONFIG).")
STATE_COLORS = {"OK": "#2ca02c", "INSUFFICIENT_DATA": "#9e9e9e", "ALARM": "#d62728"}
_col = st.column_config
# explicit widths: the default columns fit a 1280 px window beside the sidebar (about 820 px) without scrolling
SUMMARY_COLUMN_CONFIG = {
    "alarm": _col.TextColumn("alarm", width=270),
    "severity": _col.TextColumn("severity", width=65),
    "tier": _col.TextColumn("tier", width=60, help="base, or the extra tier (its name ends with the severity)."),
    "last state": _col.TextColumn("last state", width=100),
    "ALARM intervals": _col.NumberColumn("ALARM intervals", width=105),
    "first ALARM": _col.DatetimeColumn("first ALARM (UTC)", format="YYYY-MM-DD HH:mm", width=130),
    "periods in ALARM": _col.NumberColumn("ALARM periods", width=95),
    "periods OK": _col.NumberColumn("OK periods", width=80),
    "periods INSUFFICIENT_DATA": _col.NumberColumn("no-data periods", width=105,
                                                   help="Periods in INSUFFICIENT_DATA."),
    "backtest": _col.TextColumn("backtest", width=70),
}
DEFINITION_COLUMN_CONFIG = {
    "alarm": _col.TextColumn("alarm", width=270),
    "title": _col.TextColumn("title", width=200),
    "severity": _col.TextColumn("severity", width=65),
    "tier": _col.TextColumn("tier", width=60),
    "target": _col.TextColumn("target", width=120),
    "condition": _col.TextColumn("condition", width=280),
    "console": _col.LinkColumn("console", width=90, display_text="alarm",
                               help="The alarm in the CloudWatch console."),
    "logs": _col.LinkColumn("logs", width=90, display_text="Logs Insights",
                            help="The signal's Logs Insights query over the function's log group."),
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
    return default_config_shipped()


def allowed_roots(data_dir: Path | str | None) -> list[Path]:
    """Real paths under which the config box may open files: the data directory, the folder of
    ``$IDEMWATCH_ALARMS_CONFIG`` and the alarms package folder (its shipped stack configs)."""
    roots: list[Path] = []
    if data_dir:
        roots.append(Path(os.path.realpath(data_dir)))
    env = os.environ.get(ENV_ALARMS_CONFIG)
    if env:
        roots.append(Path(os.path.realpath(env)).parent)
    shipped = default_config_shipped()
    if shipped is not None:
        roots.append(Path(os.path.realpath(shipped)).parent)
    return roots


def resolve_config_path(typed: str, data_dir: Path | str | None) -> Path | None:
    """The real path of ``typed`` when it is an allowed config file (inside :func:`allowed_roots`, config
    suffix, a regular file), else None. Relative paths are taken from the process's working directory, like
    the CLI. Decided on the path alone before anything is opened."""
    if not typed or "\x00" in typed:
        return None
    real = Path(os.path.realpath(os.path.expanduser(typed)))
    if real.suffix.lower() not in CONFIG_SUFFIXES:
        return None
    inside = False
    for root in allowed_roots(data_dir):
        try:
            inside = os.path.commonpath([str(real), str(root)]) == str(root)
        except ValueError:
            continue
        if inside:
            break
    if not inside or not real.is_file():
        return None
    return real


def default_config_shipped() -> Path | None:
    """The demo stack config shipped in the alarms package (None when the part is not installed)."""
    try:
        import alarms
    except ImportError:
        return None
    for base in {Path(p) for p in getattr(alarms, "__path__", [])}:
        for ext in ("yaml", "yml", "json"):
            p = base / f"demo-stack.{ext}"
            if p.is_file():
                return p
    return None


@answer
def _backtest(config: str, config_mtime: int, data_dir: str, fingerprint: str):
    load_config, build_catalogue, run_backtest = alarms_api()  # type: ignore[misc]
    defs = build_catalogue(load_config(Path(config)))
    return list(defs), list(run_backtest(defs, Path(data_dir)))


@answer
def _log_groups(config: str, mtime: int) -> tuple[dict[tuple[str, str], str], str | None]:
    from alarms import load_config

    cfg = load_config(Path(config))
    return {(cfg.service, fn.operation): fn.log_group for fn in cfg.functions}, cfg.region


def key_links(rows: pd.DataFrame, time_from: str = "claimed_at", time_to: str = "last_seen") -> list[str | None]:
    """A Logs Insights console link per row (columns ``idempotency_key``, ``service``, ``operation`` and the two
    time columns, UTC): the key's records in its function's log group, from the first to the last time +- 5 min.
    The log group comes from the startup stack config (:func:`default_config`); None where it names no function
    for the row's service/operation, or without a config."""
    from alarms.links import key_trail_url

    cfg = default_config()
    if cfg is None or not cfg.is_file() or rows.empty:
        return [None] * len(rows)
    try:
        groups, region = _log_groups(str(cfg), cfg.stat().st_mtime_ns)
    except Exception:  # noqa: BLE001 - a broken config only costs the links
        return [None] * len(rows)
    out: list[str | None] = []
    for key, svc, op, a, b in zip(rows["idempotency_key"], rows["service"], rows["operation"], rows[time_from],
                                  rows[time_to]):
        group = groups.get((svc, op))
        if group is None or key is None or pd.isna(a):
            out.append(None)
            continue
        start = int(pd.Timestamp(a).timestamp())
        end = int(pd.Timestamp(b).timestamp()) if not pd.isna(b) else start
        out.append(key_trail_url(str(key), [group], start, max(start, end), region))
    return out


def describe(definition: Any) -> dict[str, Any]:
    """The definitions-table row of one ``alarms.AlarmDefinition``."""
    cond = definition.condition() if callable(getattr(definition, "condition", None)) else ""
    return {
        "alarm": _name(definition),
        "title": getattr(definition, "title", ""),
        "severity": _val(getattr(definition, "severity", "")),
        "tier": getattr(definition, "tier", "") or "base",
        "target": getattr(definition, "target", ""),
        "condition": cond,
        "console": dict(getattr(definition, "links", ()) or ()).get("alarm"),
        "logs": dict(getattr(definition, "links", ()) or ()).get("query"),
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
            "tier": getattr(r.definition, "tier", "") or "base",
            "last state": str(tl["state"].iloc[-1]) if n else "INSUFFICIENT_DATA",
            "ALARM intervals": len(r.alarm_intervals),
            "first ALARM": r.alarm_intervals[0][0] if r.alarm_intervals else pd.NaT,
            "periods in ALARM": int(counts.get("ALARM", 0)),
            "periods OK": int(counts.get("OK", 0)),
            "periods INSUFFICIENT_DATA": int(counts.get("INSUFFICIENT_DATA", 0)),
            "backtest": getattr(r, "status", "ok"),
            "note": getattr(r, "note", ""),
        })
    df = pd.DataFrame(rows)
    if len(df):  # one datetime column (a missing first ALARM is NaT, shown empty, not "None")
        df["first ALARM"] = pd.to_datetime(df["first ALARM"], utc=True)
    return df


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
    cfg = st.text_input("Alarm stack config", value=str(default) if default else "", key="alarm_cfg",
                        help="A stack config inside the data directory or the config folder the dashboard was "
                             "started with.")
    if not cfg:
        st.info("No alarm stack config found; enter the path of one (see `idemwatch alarms --help`).")
        ui.footer(TITLE)
        return
    if default is not None and cfg == str(default) and not default.is_file():
        # the operator's own startup setting, not a path typed in the browser: saying so probes nothing
        st.error(f"Config file not found: {ui.md_escape(cfg)} (${ENV_ALARMS_CONFIG})")
        ui.footer(TITLE)
        return
    p = resolve_config_path(cfg, ds.data_dir)
    if p is None:
        st.error(NOT_ALLOWED)
        ui.footer(TITLE)
        return
    try:
        defs, results = _backtest(str(p), p.stat().st_mtime_ns, str(ds.data_dir), ds.fingerprint)
    except Exception as exc:  # noqa: BLE001 - the alarms part raises its own errors for bad configs
        st.error(f"Backtest failed: {ui.md_escape(_safe_error(exc))}")
        ui.footer(TITLE)
        return
    s = summary(results)
    c0, c1, c2, c3 = st.columns(4)
    c0.metric("Backtested", f"{int((s['backtest'] == 'ok').sum()) if len(s) else 0:,}")
    c1.metric("Alarms", f"{len(defs):,}")
    c2.metric("In ALARM at the end", f"{int((s['last state'] == 'ALARM').sum()) if len(s) else 0:,}")
    c3.metric("Alarms that fired", f"{int((s['ALARM intervals'] > 0).sum()) if len(s) else 0:,}")
    st.subheader("State and backtest")
    ui.table(s, key="alarm_summary", columns=SUMMARY_COLUMN_CONFIG,
             shown=["alarm", "severity", "last state", "ALARM intervals", "first ALARM", "periods in ALARM"])
    if results:
        names = [_name(r.definition) for r in results]
        fired = [i for i, r in enumerate(results) if r.alarm_intervals]
        pick = st.selectbox("Timeline of", range(len(results)), index=fired[0] if fired else 0,
                            format_func=lambda i: names[i], key="alarm_pick")
        _timeline(results[pick], f)
    st.subheader("Definitions")
    ui.table(pd.DataFrame([describe(d) for d in defs]), key="alarm_defs", columns=DEFINITION_COLUMN_CONFIG,
             shown=["alarm", "severity", "condition", "console", "logs"])
    ui.footer(TITLE)


def _safe_error(exc: Exception) -> str:
    """What the page may show of a failure: the alarms part's own messages (key paths, rule names; the config
    loader never quotes the file), otherwise the exception type only."""
    try:
        from alarms.exceptions import AlarmsError
    except ImportError:  # pragma: no cover - the page checked the part is installed
        return f"{type(exc).__name__} (details in the server log)"
    if isinstance(exc, AlarmsError):
        return str(exc)[:2000]
    return f"{type(exc).__name__} (details in the server log)"


def timeline_chart(result: Any) -> Any:
    """The timeline of one backtest (``charts.alarm_timeline``): value per period with the threshold line and the
    ALARM periods shaded, and below it the state band on its own row, so value and state never overlap."""
    d = result.definition
    return charts.alarm_timeline(result.timeline, timedelta(seconds=int(getattr(d, "period", 60) or 60)),
                                 threshold=getattr(d, "threshold", None), unit=str(getattr(d, "unit", "") or ""),
                                 state_colours=STATE_COLORS)


def _timeline(result: Any, f) -> None:
    if result.timeline.empty:
        st.caption("Empty timeline (no periods in the collected data).")
        return
    ui.chart(timeline_chart(result), key="alarm_timeline", zoom=False)
    st.caption("Dashed line: the alarm's threshold. Shaded: intervals in ALARM. Lower band: the state after each "
               "period's evaluation (NO DATA = INSUFFICIENT_DATA). The backtest covers the whole collected history: "
               "drag to zoom this chart only, double-click to reset.")
