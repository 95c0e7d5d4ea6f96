"""Check a demo run's ground truth against what the logs and the collected tables say.

Used by ``idemwatch demo`` to print whether the tables agree with what was injected. Two
views of the same counts, both keyed ``(function, outcome value) -> n``:

- :func:`counts_from_logs`: plain JSON parsing of the export files (no collector involved);
- :func:`counts_from_tables`: the collector's ``outcomes`` table (Operation -> function via
  :data:`~.constants.OPERATIONS`).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from emitter.contract import LogKey

from .constants import FUNCTIONS, OPERATIONS
from .truth import DemoTruth

__all__ = ["counts_from_logs", "counts_from_tables", "mismatches", "truth_counts"]

Counts = Counter[tuple[str, str]]


def truth_counts(truth: DemoTruth) -> Counts:
    return Counter({(fn, o): n for fn, ft in truth.functions.items() for o, n in ft.outcomes.items()})


def counts_from_logs(logs_dir: Path) -> Counts:
    """Outcome records per (function = file stem, outcome) in ``<logs_dir>/<function>.log``.

    Raises ValueError on a line that is not ``<timestamp> <message>`` (the demo never writes one)."""
    out: Counts = Counter()
    for fn in FUNCTIONS:
        path = Path(logs_dir) / f"{fn}.log"
        with path.open(encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                ts, sep, msg = line.rstrip("\n").partition(" ")
                if not sep or not ts.endswith("Z"):
                    raise ValueError(f"{path}:{n}: not an export line")
                if msg.startswith("{"):
                    outcome = json.loads(msg).get(LogKey.OUTCOME.value)
                    if outcome is not None:
                        out[(fn, outcome)] += 1
    return out


def counts_from_tables(data_dir: Path) -> Counts:
    """Outcome counts from ``<data_dir>/tables/outcomes.parquet`` (needs duckdb, the collector extra)."""
    import duckdb

    by_operation = {op: fn for fn, op in OPERATIONS.items()}
    path = Path(data_dir) / "tables" / "outcomes.parquet"
    con = duckdb.connect()
    try:
        rows = con.execute(
            "SELECT operation, outcome, sum(events) FROM read_parquet(?) GROUP BY ALL", [str(path)]
        ).fetchall()
    finally:
        con.close()
    out: Counts = Counter()
    for op, outcome, n in rows:
        out[(by_operation.get(op, f"?{op}"), outcome)] += int(n)
    return out


def mismatches(expected: Counts, actual: Counts) -> dict[tuple[str, str], tuple[int, int]]:
    """``{(function, outcome): (expected, actual)}`` for every key where the counts differ."""
    keys = set(expected) | set(actual)
    return {k: (expected.get(k, 0), actual.get(k, 0)) for k in sorted(keys) if expected.get(k, 0) != actual.get(k, 0)}


@dataclass(frozen=True)
class DiagnosisRow:
    """One function of :func:`diagnosis_vs_truth`: the anti-patterns built into it, the rules that must find them
    (``expected``), the rules ``idemwatch diagnose`` found (``found``), and whether the two sets are equal."""

    function: str
    injected: tuple[str, ...]
    expected: frozenset[str]
    found: frozenset[str]

    @property
    def match(self) -> bool:
        return self.expected == self.found


def diagnosis_vs_truth(truth: Any, data_dir: Path) -> list[DiagnosisRow]:
    """Run ``idemwatch diagnose`` over ``data_dir``'s collected events, write ``data_dir/diagnose.json`` (the
    ``--format json`` document) and compare what it found per function with ``truth.expected_rules()``.

    Raises:
        alarms.diagnose.exceptions.SourceError: ``data_dir`` holds no collected events.
    """
    import json

    from alarms.diagnose import diagnose_data_dir, to_json
    from alarms.diagnose.report import DIAGNOSE_JSON_FILE
    from alarms.diagnose.types import DiagnoseOptions, FindingStatus

    options = DiagnoseOptions()
    source, findings = diagnose_data_dir(data_dir, options)
    (Path(data_dir) / DIAGNOSE_JSON_FILE).write_text(json.dumps(to_json(findings, source, options), indent=2) + "\n",
                                                     encoding="utf-8")
    expected = truth.expected_rules()
    return [DiagnosisRow(fn, tuple(truth.anti_patterns.get(fn, [])), frozenset(want),
                         frozenset(f.rule for f in findings if f.function == fn and f.status is FindingStatus.FAIL))
            for fn, want in expected.items()]
