"""The local collector's table code runs without pandas: importing ``collector.parquet``/``collector.local_tables``
and the post-processing of a stuck_keys and a log-group table do not import it (pandas costs 0.17 s of every
``collect local``; only the CloudWatch collector's merges and the dashboard need it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[3]

_SCRIPT = r"""
import sys
import duckdb
from collector.local_tables import write_standard_tables
from collector.parquet import arrow_schema, write_parquet
from collector.postprocess import split_log_identifier, stuck_key_ages
from collector.tables import TABLES

con = duckdb.connect()
stuck = con.sql("SELECT 'k' AS idempotency_key, 's' AS service, 'o' AS operation, 'IN_PROGRESS' AS last_status, "
                "'claimed' AS last_outcome, make_timestamp(1767607200000000) AS claimed_at, "
                "make_timestamp(1767607200000000) AS last_seen, make_timestamp(1767607260000000) AS "
                "in_progress_expires_at, 1::BIGINT AS attempts, 'r' AS last_request_id, NULL::DOUBLE AS age_s, "
                "NULL::BOOLEAN AS expired").to_arrow_table().cast(arrow_schema(TABLES["stuck_keys"]))
aged = stuck_key_ages(stuck, 1767607230500)
logs = con.sql("SELECT * FROM (VALUES ('123456789012:/aws/lambda/fn', NULL::VARCHAR), ('plain', 'a')) "
               "AS t(log_group, account_id)").to_arrow_table()
split = split_log_identifier(logs)
write_parquet(aged, TABLES["stuck_keys"], __import__("pathlib").Path(sys.argv[1]))
print("pandas" in sys.modules, aged.column("age_s").to_pylist(), aged.column("expired").to_pylist(),
      split.column("log_group").to_pylist(), split.column("account_id").to_pylist())
"""


def test_table_post_processing_does_not_import_pandas(tmp_path: Path):
    out = subprocess.run([sys.executable, "-c", _SCRIPT, str(tmp_path / "s.parquet")], cwd=_ROOT, check=True,
                         capture_output=True, text=True).stdout.split(" ", 1)
    # age: 30.5 s after the claim; the lock expires 60 s after it, so not expired
    assert out == ["False", "[30.5] [False] ['/aws/lambda/fn', 'plain'] ['123456789012', 'a']\n"]
