"""Test doubles of CloudWatch for tests, benchmarks and trying the collector without AWS (127.0.0.1 only).

The fake Logs Insights server is ``fake_server.FakeLogsInsightsServer`` (with ``Faults``); the engines answering its
queries are in ``fake_engines``. ``python -m collector.cloudwatch.testing --logs DIR`` serves a folder of logs
(same as ``python -m collector.cloudwatch.fake_server``).
"""

from collector.cloudwatch.fake_engines import (
    Engine,
    InsightsEngine,
    Rows,
    default_engine,
    format_ts,
    insights_engine,
    load_export_lines,
    raw_events_engine,
    trail_engine,
)
from collector.cloudwatch.fake_server import FakeLogsInsightsServer, Faults, main

__all__ = ["Engine", "FakeLogsInsightsServer", "Faults", "InsightsEngine", "Rows", "default_engine", "format_ts",
           "insights_engine", "load_export_lines", "main", "raw_events_engine", "trail_engine"]

if __name__ == "__main__":  # pragma: no cover
    main()
