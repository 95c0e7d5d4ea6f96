"""An independent oracle for dashboard numbers: DuckDB SQL straight on the Parquet tables
(the dashboard computes with pandas on its own loaded copy)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import duckdb

from dashboard.constants import SignalKind
from emitter.contract import Outcome


class Oracle:
    def __init__(self, data_dir: Path, start: datetime, end: datetime) -> None:
        self.t = Path(data_dir) / "tables"
        self.start, self.end = start, end

    def q(self, sql: str, *params):
        con = duckdb.connect()
        try:
            return con.execute(sql.replace("{T}", str(self.t)), [self.start, self.end, *params]).fetchone()[0]
        finally:
            con.close()

    def count(self, outcome: str) -> int:
        return int(self.q("SELECT coalesce(sum(events), 0) FROM '{T}/outcomes.parquet' "
                          "WHERE time >= ? AND time < ? AND outcome = ?", outcome))

    def value(self, sig) -> float | None:
        if sig.kind is SignalKind.COUNT:
            return float(self.count(sig.outcome.value))
        if sig.kind is SignalKind.RATE:
            rec = self.count(Outcome.RECEIVED.value)
            return None if rec == 0 else self.count(sig.outcome.value) / rec
        if sig.kind is SignalKind.AGE:
            # iterator age: stream and queue sources only (Lambda's IteratorAge sources), spelled here by hand
            return self.q("SELECT max(max_ms) FROM '{T}/record_age.parquet' WHERE time >= ? AND time < ? "
                          "AND records > 0 AND event_source IN ('sqs', 'kinesis', 'dynamodb', 'msk', "
                          "'self-managed-kafka', 'activemq', 'rabbitmq')")
        # stuck = state at the window end: claimed at or before it, lock expiry passed before it
        return float(self.at_end("SELECT count(*) FROM '{T}/stuck_keys.parquet' WHERE claimed_at <= ? "
                                 "AND in_progress_expires_at < ?"))

    def at_end(self, sql: str):
        """``sql`` with every ``?`` bound to the window end."""
        con = duckdb.connect()
        try:
            return con.execute(sql.replace("{T}", str(self.t)), [self.end] * sql.count("?")).fetchone()[0]
        finally:
            con.close()

    def window(self) -> tuple[datetime, datetime]:
        """Data window: first 1-minute bin .. last bin + 1 minute, over the time-binned tables."""
        con = duckdb.connect()
        try:
            lo, hi = con.execute(
                "SELECT min(time), max(time) + INTERVAL 1 minute FROM ("
                + " UNION ALL ".join(f"SELECT time FROM '{self.t}/{n}.parquet'"
                                     for n in ("outcomes", "record_age", "rates", "error_codes", "invocations"))
                + ")").fetchone()
            return lo, hi
        finally:
            con.close()
