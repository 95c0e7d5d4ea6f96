"""Contributor Insights rules replayed offline on the collected ``trail`` table: the top-N the rule would show.

The ``trail`` table (``collector/queries/trail.insights``) holds every outcome record of the emitter with its log
group, time and fields, so a rule over those records can be evaluated on it as Contributor Insights evaluates it on
the log events: the records of the rule's log groups (``LogGroupNames``, ``*`` as a prefix) that pass every filter
(AND; ``In`` / ``StartsWith`` any of the values; ``IsPresent``), counted per combination of the ``Keys`` values (a
record lacking a key is no contributor), ranked by count (ties: keys in ascending order). ``$.<field>`` is the
trail's column of that name; a rule reading a field the trail has no column for (``tenant_id`` in the standard
trail) is reported as unsupported, by name, never guessed.

Differences that remain: CloudWatch's report is approximate when a rule sees very many unique contributors
(``ApproximateAggregateValue``), and it only sees the records Lambda delivered to CloudWatch Logs; the trail holds the
records the collector read. Times are epoch **seconds**; a window is ``start <= time < end``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from alarms.exceptions import BacktestError
from alarms.insight_rules import InsightRuleDefinition, rule_fields

TRAIL_TABLE = "trail"
STATUS_OK = "ok"
STATUS_NO_DATA = "no_data"
STATUS_UNSUPPORTED = "unsupported"


@dataclass(frozen=True)
class Contributor:
    """One contributor: its key values (in the rule's ``Keys`` order) and how many records it has in the window."""

    keys: tuple[str, ...]
    count: int


@dataclass
class ReplayResult:
    """The top contributors of one rule over ``[start_s, end_s)`` (epoch seconds; None: the whole trail).
    ``matched``: records that passed the filters (the rule's matched log events); ``unique``: distinct
    contributors; ``status``: "ok" | "no_data" (no trail) | "unsupported" (``note`` says why)."""

    rule: InsightRuleDefinition
    contributors: list[Contributor] = field(default_factory=list)
    matched: int = 0
    unique: int = 0
    status: str = STATUS_OK
    note: str = ""
    start_s: int | None = None
    end_s: int | None = None


def load_trail(data_dir: str | Path) -> Any:
    """The ``trail`` table of a collected history as a pandas DataFrame with an added ``time_s`` column (epoch
    seconds, float), or None when the history has no trail. Raises :class:`BacktestError` when ``<data>/tables``
    is missing or the table cannot be read."""
    import pandas as pd

    tables = Path(data_dir) / "tables"
    if not tables.is_dir():
        raise BacktestError(f"{tables} does not exist: collect the history first (idemwatch collect ...)")
    p = tables / f"{TRAIL_TABLE}.parquet"
    if not p.exists():
        return None
    try:
        df = pd.read_parquet(p)
    except Exception as exc:  # pyarrow errors vary by corruption type
        raise BacktestError(f"{p}: cannot read the table ({exc})") from exc
    ts = pd.to_datetime(df["timestamp"], utc=True)
    df = df.copy()
    df["time_s"] = ts.astype("int64") / {"s": 1, "ms": 1e3, "us": 1e6, "ns": 1e9}[getattr(ts.dt, "unit", "ns")]
    return df


def top_contributors(body: dict[str, Any], trail: Any, start_s: float | None = None, end_s: float | None = None,
                     top: int = 10) -> tuple[list[Contributor], int, int]:
    """(the ``top`` contributors, records matched, unique contributors) of the JSON rule ``body`` on ``trail``
    (:func:`load_trail`) in ``[start_s, end_s)``. Raises ``ValueError`` naming a field the trail has no column for,
    or a rule this replay does not evaluate (CLF, ``AggregateOn: Sum``)."""
    if body.get("LogFormat") != "JSON" or body.get("AggregateOn", "Count") != "Count":
        raise ValueError("only JSON rules aggregating on Count are replayed")
    missing = [f for f in rule_fields(body) if f not in trail.columns]
    if missing:
        raise ValueError(f"{', '.join(missing)}: not a column of the trail table, so the rule cannot be replayed "
                         "(the trail holds " + ", ".join(c for c in trail.columns if c != "time_s") + ")")
    mask = trail["time_s"].notna()
    if start_s is not None:
        mask &= trail["time_s"] >= start_s
    if end_s is not None:
        mask &= trail["time_s"] < end_s
    groups = body.get("LogGroupNames") or []
    if groups:
        lg = trail["log_group"].fillna("")
        in_groups = lg.isin([g for g in groups if not g.endswith("*")])
        for g in groups:
            if g.endswith("*"):
                in_groups |= lg.str.startswith(g[:-1])
        mask &= in_groups
    contribution = body.get("Contribution") or {}
    for f in contribution.get("Filters") or []:
        mask &= _filter(trail, f)
    keys = [k[2:] for k in contribution.get("Keys") or []]
    for k in keys:
        mask &= trail[k].notna()
    rows = trail.loc[mask, keys].astype(str)
    sizes = rows.groupby(keys, sort=False).size()
    counts = {(k if isinstance(k, tuple) else (k,)): int(n) for k, n in sizes.items()}
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return [Contributor(k, n) for k, n in ranked[:top]], int(mask.sum()), len(counts)


def _filter(trail: Any, f: dict[str, Any]) -> Any:
    col = trail[f["Match"][2:]]
    present = col.notna()
    text = col if col.dtype == object else col.astype(str)  # the trail's string columns compare as they are
    if "In" in f:
        return present & text.isin([str(v) for v in f["In"]])
    if "NotIn" in f:
        return present & ~text.isin([str(v) for v in f["NotIn"]])
    if "StartsWith" in f:
        hit = present & False
        for v in f["StartsWith"]:
            hit |= present & text.str.startswith(str(v))
        return hit
    if "IsPresent" in f:
        return present if f["IsPresent"] else ~present
    import pandas as pd

    num = pd.to_numeric(col, errors="coerce")
    ops = {"GreaterThan": num.gt, "LessThan": num.lt, "EqualTo": num.eq, "NotEqualTo": num.ne}
    for op, fn in ops.items():
        if op in f:
            return num.notna() & fn(float(f[op]))
    raise ValueError(f"unknown filter operator in {f}")


def replay_rules(rules: Sequence[InsightRuleDefinition], data_dir: str | Path, start_s: float | None = None,
                 end_s: float | None = None, top: int = 10) -> list[ReplayResult]:
    """Replay every rule on the history in ``data_dir`` (one :class:`ReplayResult` each, same order). Raises
    :class:`BacktestError` as :func:`load_trail`."""
    trail = load_trail(data_dir)
    out = []
    lo = None if start_s is None else math.floor(start_s)
    hi = None if end_s is None else math.ceil(end_s)
    for r in rules:
        if trail is None:
            out.append(ReplayResult(r, status=STATUS_NO_DATA, note="no trail table in this history", start_s=lo,
                                    end_s=hi))
            continue
        try:
            found, matched, unique = top_contributors(r.body(), trail, start_s, end_s, top)
        except ValueError as exc:
            out.append(ReplayResult(r, status=STATUS_UNSUPPORTED, note=str(exc), start_s=lo, end_s=hi))
            continue
        out.append(ReplayResult(r, found, matched, unique, start_s=lo, end_s=hi))
    return out
