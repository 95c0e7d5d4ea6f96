"""A local CloudWatch Logs Insights server for tests and benchmarks (127.0.0.1 only).

moto's Logs Insights ignores ``filter``, ``stats`` and ``parse``, so this server speaks the CloudWatch Logs JSON
protocol (``X-Amz-Target: Logs_20140328.<Operation>``, ``application/x-amz-json-1.1``) for StartQuery,
GetQueryResults, StopQuery, DescribeLogGroups, CreateLogGroup and PutLogEvents, and answers queries with the
offline Logs Insights engine (``collector.insights.run_query`` over an ``EventStore``), or with any engine passed in.

Faults (``Faults``) reproduce what real accounts do: LimitExceededException for the first N StartQuery calls or
when the account's concurrent-query quota is full (``account_quota``, part of it held by other clients:
``held_by_others``), ThrottlingException past an operation's transactions per second (``tps``) or for the first N
GetQueryResults calls, ``Running`` with partial results, terminal statuses Timeout / Unknown / Failed, the old
10,000-row cap without ``nextToken``, slow queries (fixed latency) and queries that never finish. Every call is
recorded in ``calls``.

Field indexes (PutIndexPolicy, DescribeIndexPolicies, DeleteIndexPolicy; ``filterIndex`` and equality ``filter``
terms skipping events and log groups) follow ``tests.support.fake_field_indexes``. Every query reports what it scanned
(``bytesScanned``, ``recordsScanned``, ``estimatedBytesSkipped``, ``estimatedRecordsSkipped``, ``logGroupsScanned``,
the QueryStatistics members of botocore's model); ``scanned_bytes`` sums ``bytesScanned`` over the queries started.

Usage::

    with FakeLogsInsightsServer(latency_s=0.05) as srv:
        srv.put_events("/aws/lambda/orders", [{"timestamp": ms, "message": "..."}])
        logs = boto3.client("logs", endpoint_url=srv.url, region_name="us-east-1")
"""

from __future__ import annotations

import itertools
import json
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from collector.cloudwatch.constants import MAX_LOG_GROUPS_PER_QUERY, MAX_QUERY_LIMIT, ROWS_PER_PAGE
from tests.support.fake_field_indexes import (
    MAX_FIELD_NAME,
    MAX_INDEXED_FIELDS,
    IndexPolicy,
    index_uses,
    scan_group,
)
from tests.support.fake_logs_insights_engines import (
    FAKE_ACCOUNT_ID,
    Engine,
    Rows,
    default_engine,
    load_export_lines,
)


@dataclass
class Faults:
    """Fault injection knobs (all off by default).

    limit_exceeded_first_n: the first N StartQuery calls fail with LimitExceededException.
    throttle_get_first_n: the first N GetQueryResults calls fail with ThrottlingException.
    account_quota: the account's concurrent Logs Insights queries (0 = unlimited): StartQuery fails with
        LimitExceededException while this many run. A query runs from StartQuery until it ends (its latency passed,
        or StopQuery), whether or not its client has read the result.
    held_by_others: slots of that quota other clients (dashboards, people) hold: a number, or a function of the
        seconds since the server started (a quota that frees and fills up during a run).
    tps: operation -> calls per second allowed (token bucket holding one second of calls); past it the call fails
        with ThrottlingException, as CloudWatch Logs' per-account TPS quotas do.
    partial_polls: each query answers ``Running`` with the first half of its rows for this many polls first.
    terminal_statuses: successive queries end with these statuses instead of Complete (e.g. ["Timeout", "Unknown"]).
    hang_first_n: the first N queries never finish (stay Running until StopQuery).
    no_pagination: behave like the API before ``nextToken``: at most 10,000 rows per query, no nextToken.
    metric_page_datapoints: with an upstream (moto), GetMetricData answers are cut into pages of this many
        datapoints with ``NextToken`` (moto returns everything at once; CloudWatch pages at 100,800 datapoints).
    deny_operations: these operations fail with AccessDeniedException.
    """

    limit_exceeded_first_n: int = 0
    throttle_get_first_n: int = 0
    account_quota: int = 0
    held_by_others: int | Callable[[float], int] = 0
    tps: dict[str, float] = field(default_factory=dict)
    partial_polls: int = 0
    terminal_statuses: list[str] = field(default_factory=list)
    hang_first_n: int = 0
    no_pagination: bool = False
    metric_page_datapoints: int = 0
    deny_operations: set[str] = field(default_factory=set)


@dataclass
class _Query:
    qid: str
    start: int
    end: int
    groups: tuple[str, ...]
    limit: int
    started: float
    rows: Rows
    stats: dict[str, float]
    final_status: str = "Complete"
    hang: bool = False
    stopped: bool = False
    polls: int = 0
    observed_terminal: bool = False

    def done(self, now: float, latency_s: float, partial_polls: int) -> bool:
        """Finished on the service side (a result is ready): not hanging, latency passed, polled enough."""
        return not self.hang and now - self.started >= latency_s and self.polls > partial_polls

    def running(self, now: float, latency_s: float, partial_polls: int) -> bool:
        """Holds one of the account's concurrent-query slots."""
        return not self.stopped and not self.observed_terminal and not self.done(now, latency_s, partial_polls)


class FakeLogsInsightsServer:
    """Threaded HTTP server on 127.0.0.1 speaking the CloudWatch Logs JSON protocol (see module docstring).

    ``latency_s``: seconds a query stays Running after StartQuery, on ``monotonic`` (default ``time.monotonic``; a
    test whose runner runs on a clock of its own passes the same one, so poll timings do not depend on the machine's
    load). ``engine``: see ``Engine`` (default: the offline engine if importable). ``calls``: list of (operation, request body) in arrival order. ``max_in_flight``: the
    most queries started and not yet seen finished or stopped by the client at any moment.
    """

    def __init__(self, *, latency_s: float = 0.0, engine: Engine | None = None, faults: Faults | None = None,
                 port: int = 0, upstream: str | None = None,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        if upstream is not None and not upstream.startswith(("http://127.0.0.1:", "http://localhost:")):
            raise ValueError("upstream must be a loopback URL")
        self.upstream = upstream
        self.latency_s = latency_s
        self.monotonic = monotonic
        self.engine = engine or default_engine()
        self.faults = faults or Faults()
        self.groups: dict[str, list[dict[str, Any]]] = {}
        self.queries: dict[str, _Query] = {}
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.max_in_flight = 0
        self.version = 0  # bumped when events are added (engines cache on it)
        self.index_policies: dict[str, IndexPolicy] = {}
        self.group_meta: dict[str, dict[str, Any]] = {}  # log group -> creationTime, retentionInDays overrides
        self.throttled: dict[str, int] = {}  # operation -> calls answered ThrottlingException (tps)
        self.limit_exceeded = 0  # StartQuery calls answered LimitExceededException (quota full)
        self.scanned_bytes = 0.0  # bytesScanned summed over the queries started
        self.clock: Callable[[], float] = time.time  # epoch seconds: index policy times, the 30-day index life
        self._t0 = self.monotonic()
        self._buckets: dict[str, list[float]] = {}
        self._lock = threading.RLock()
        self._engine_lock = threading.Lock()
        self._counters: dict[str, int] = {}
        self._status_iter = iter(self.faults.terminal_statuses)
        self._seq = itertools.count()
        handler = type("Handler", (_Handler,), {"server_ref": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), handler)
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ lifecycle
    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> Self:
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="fake-logs-insights", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ data
    def put_events(self, log_group: str, events: list[dict[str, Any]]) -> None:
        """Add filter-log-events style events (``timestamp`` epoch ms, ``message``, optional ``logStreamName``,
        ``ingestionTime``, ``eventId``) to ``log_group`` (created if missing)."""
        with self._lock:
            self.version += 1
            bucket = self.groups.setdefault(log_group, [])
            for e in events:
                ev = dict(e)
                ev.setdefault("logStreamName", "stream")
                ev.setdefault("ingestionTime", ev["timestamp"])
                ev.setdefault("eventId", f"{next(self._seq):020d}")
                bucket.append(ev)

    def put_index_policy(self, log_group: str, fields: list[str], at_s: float | None = None) -> None:
        """Give ``log_group`` a field index policy of ``fields`` in force from ``at_s`` (epoch s; default now), as
        PutIndexPolicy does: later events are indexed, earlier ones not (``tests.support.fake_field_indexes``)."""
        with self._lock:
            pol = self.index_policies.setdefault(log_group, IndexPolicy())
            pol.versions.append((int((self.clock() if at_s is None else at_s) * 1000), tuple(fields)))
            self.version += 1

    def count(self, op: str) -> int:
        """Number of calls of ``op`` received (including failed ones)."""
        with self._lock:
            return sum(1 for o, _ in self.calls if o == op)

    def _in_flight(self) -> int:
        now = self.monotonic()
        return sum(1 for q in self.queries.values() if q.running(now, self.latency_s, self.faults.partial_polls))

    def _held_by_others(self) -> int:
        held = self.faults.held_by_others
        return int(held(self.monotonic() - self._t0)) if callable(held) else int(held)

    def _throttled(self, op: str) -> bool:
        """Token bucket of ``op`` (``Faults.tps``): True when this call is over the rate. Caller holds the lock."""
        rate = self.faults.tps.get(op)
        if not rate:
            return False
        now = self.monotonic()
        bucket = self._buckets.setdefault(op, [max(rate, 1.0), now])
        bucket[0] = min(max(rate, 1.0), bucket[0] + (now - bucket[1]) * rate)
        bucket[1] = now
        if bucket[0] >= 1.0:
            bucket[0] -= 1.0
            return False
        self.throttled[op] = self.throttled.get(op, 0) + 1
        return True

    def _bump(self, name: str) -> int:
        self._counters[name] = self._counters.get(name, 0) + 1
        return self._counters[name]

    # ------------------------------------------------------------------ operations
    def handle(self, op: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self.calls.append((op, body))
            if op in self.faults.deny_operations:
                return _error("AccessDeniedException", f"User is not authorized to perform: logs:{op}")
            if self._throttled(op):
                return _error("ThrottlingException", "Rate exceeded")
        fn = getattr(self, "_op_" + op, None)
        if fn is None:
            return _error("UnknownOperationException", f"operation {op} is not supported by the fake server")
        return fn(body)

    def _op_CreateLogGroup(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            if body["logGroupName"] in self.groups:
                return _error("ResourceAlreadyExistsException", "The specified log group already exists")
            self.groups[body["logGroupName"]] = []
        return 200, {}

    def _op_PutLogEvents(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if body["logGroupName"] not in self.groups:
            return _error("ResourceNotFoundException", "The specified log group does not exist.")
        self.put_events(body["logGroupName"], [dict(e, logStreamName=body["logStreamName"]) for e in body["logEvents"]])
        return 200, {}

    def _op_DescribeLogGroups(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        prefix = body.get("logGroupNamePrefix", "")
        limit = int(body.get("limit", 50))
        with self._lock:
            names = sorted(g for g in self.groups if g.startswith(prefix))
        offset = int(body.get("nextToken", 0) or 0)
        page = names[offset:offset + limit]
        out: dict[str, Any] = {"logGroups": [self._describe_group(n) for n in page]}
        if offset + limit < len(names):
            out["nextToken"] = str(offset + limit)
        return 200, out

    def _describe_group(self, n: str) -> dict[str, Any]:
        evs = self.groups[n]
        first = min((e["ingestionTime"] for e in evs), default=int(self.clock() * 1000))
        return {"logGroupName": n, "arn": f"arn:aws:logs:us-east-1:{FAKE_ACCOUNT_ID}:log-group:{n}:*",
                "creationTime": first, "storedBytes": sum(len(e["message"].encode()) for e in evs),
                "logGroupClass": "STANDARD", **self.group_meta.get(n, {})}

    def _op_PutIndexPolicy(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        name = _group_name(body.get("logGroupIdentifier", ""))
        try:
            fields = json.loads(body.get("policyDocument") or "")["Fields"]
        except (ValueError, KeyError, TypeError):
            return _error("InvalidParameterException", "policyDocument must be JSON with a Fields list")
        if not isinstance(fields, list) or not 1 <= len(fields) <= MAX_INDEXED_FIELDS \
                or not all(isinstance(f, str) and 0 < len(f) <= MAX_FIELD_NAME for f in fields):
            return _error("InvalidParameterException", f"Fields must hold 1 to {MAX_INDEXED_FIELDS} field names of at "
                                                       f"most {MAX_FIELD_NAME} characters")
        with self._lock:
            if name not in self.groups:
                return _error("ResourceNotFoundException", "The specified log group does not exist.")
        self.put_index_policy(name, fields)
        return 200, {"indexPolicy": self._policy_json(name)}

    def _op_DescribeIndexPolicies(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        ids = body.get("logGroupIdentifiers") or []
        if len(ids) != 1:  # botocore's model: min 1, max 1
            return _error("InvalidParameterException", "logGroupIdentifiers must hold exactly one log group")
        name = _group_name(ids[0])
        with self._lock:
            if name not in self.groups:
                return _error("ResourceNotFoundException", "The specified log group does not exist.")
            pol = self.index_policies.get(name)
            return 200, {"indexPolicies": [self._policy_json(name)] if pol and pol.fields else []}

    def _op_DeleteIndexPolicy(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        name = _group_name(body.get("logGroupIdentifier", ""))
        with self._lock:
            pol = self.index_policies.get(name)
            if not pol or not pol.fields:
                return _error("ResourceNotFoundException", "The log group has no index policy.")
        self.put_index_policy(name, [])
        return 200, {}

    def _policy_json(self, name: str) -> dict[str, Any]:
        pol = self.index_policies[name]
        return {"logGroupIdentifier": f"arn:aws:logs:us-east-1:{FAKE_ACCOUNT_ID}:log-group:{name}",
                "lastUpdateTime": pol.last_update_ms, "policyDocument": json.dumps({"Fields": list(pol.fields)}),
                "source": "LOG_GROUP"}

    def _op_StartQuery(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        names = body.get("logGroupNames") or ([body["logGroupName"]] if body.get("logGroupName") else [])
        if not names or len(names) > MAX_LOG_GROUPS_PER_QUERY:
            return _error("InvalidParameterException", "logGroupNames must hold 1 to 50 log groups")
        start, end = int(body["startTime"]), int(body["endTime"])
        if end < start:
            return _error("InvalidParameterException", "endTime is before startTime")
        max_limit = ROWS_PER_PAGE if self.faults.no_pagination else MAX_QUERY_LIMIT
        limit = int(body.get("limit", ROWS_PER_PAGE))
        if not 1 <= limit <= max_limit:
            return _error("InvalidParameterException", f"limit must be between 1 and {max_limit}")
        query = body["queryString"]
        with self._lock:
            n = self._bump("StartQuery")
            if n <= self.faults.limit_exceeded_first_n:
                self.limit_exceeded += 1
                return _error("LimitExceededException", "Account maximum query concurrency limit of [30] reached.")
            for g in names:
                if g not in self.groups:
                    return _error("ResourceNotFoundException", f"Log group '{g}' does not exist for account ID "
                                                               f"'{FAKE_ACCOUNT_ID}'")
            # the service's window: start*1000 <= t <= end*1000 (endTime compared in ms, aws/aws-sdk#280); simple
            # engines also get the runner's leading "filter toMillis(@timestamp) <= N" applied here
            bound = _leading_time_filter(query)
            window = {g: [e for e in self.groups[g] if start * 1000 <= e["timestamp"] <= end * 1000
                          and (bound is None or e["timestamp"] <= bound)] for g in names}
            policies = {g: self.index_policies.get(g) for g in names}
            now_ms = int(self.clock() * 1000)
        try:
            uses = index_uses(query)
        except Exception as exc:  # noqa: BLE001 - the offline parser's errors become MalformedQueryException
            return _error("MalformedQueryException", str(exc))
        scans = {g: scan_group(window[g], policies[g], uses, now_ms) for g in names}
        scanned = [e for s in scans.values() for e in s.scanned]
        nbytes = sum(len(e["message"].encode()) for e in scanned)
        window_bytes = sum(len(e["message"].encode()) for v in window.values() for e in v)
        visible_names = tuple(sorted(g for g in names if not scans[g].skipped))
        forced = [u.field for u in uses if u.force]
        with self._engine_lock:
            try:
                if not visible_names:
                    rows: Rows = []
                elif hasattr(self.engine, "run_on"):
                    only = _indexed_sql(visible_names, policies, forced, now_ms) if forced else None
                    rows = self.engine.run_on(self, query, visible_names, start, end, only=only)
                else:
                    rows = self.engine(query, {g: scans[g].visible for g in visible_names}, start, end)
            except Exception as exc:  # noqa: BLE001 - the engine's parse errors become MalformedQueryException
                return _error("MalformedQueryException", str(exc))
        stats = {"recordsMatched": float(len(scanned)), "recordsScanned": float(len(scanned)),
                 "bytesScanned": float(nbytes),
                 "estimatedRecordsSkipped": float(sum(len(v) for v in window.values()) - len(scanned)),
                 "estimatedBytesSkipped": float(window_bytes - nbytes),
                 "logGroupsScanned": float(len(visible_names)), "resultCount": float(min(len(rows), limit))}
        q = _Query(uuid.uuid4().hex, start, end, tuple(names), limit, self.monotonic(), rows, stats)
        with self._lock:  # quota check and registration in one step, so concurrent starts cannot both pass
            if self.faults.account_quota and self._in_flight() + self._held_by_others() >= self.faults.account_quota:
                self.limit_exceeded += 1
                return _error("LimitExceededException", "Account maximum query concurrency limit reached.")
            q.final_status = next(self._status_iter, "Complete")
            q.hang = self._bump("started") <= self.faults.hang_first_n
            self.queries[q.qid] = q
            self.scanned_bytes += nbytes
            self.max_in_flight = max(self.max_in_flight, self._in_flight())
        return 200, {"queryId": q.qid}

    def _op_GetQueryResults(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            if self._bump("GetQueryResults") <= self.faults.throttle_get_first_n:
                return _error("ThrottlingException", "Rate exceeded")
            q = self.queries.get(body.get("queryId", ""))
            if q is None:
                return _error("ResourceNotFoundException", "Query does not exist.")
            q.polls += 1
            if q.stopped:
                q.observed_terminal = True
                return 200, {"status": "Cancelled", "results": [], "statistics": q.stats}
            done = q.done(self.monotonic(), self.latency_s, self.faults.partial_polls)
            if not done:
                partial = q.rows[: len(q.rows) // 2] if self.faults.partial_polls else []
                return 200, {"status": "Running", "results": _fields(partial[:ROWS_PER_PAGE]),
                             "statistics": {k: v / 2 for k, v in q.stats.items()}}
            q.observed_terminal = True
            if q.final_status != "Complete":
                return 200, {"status": q.final_status, "results": [], "statistics": q.stats}
            capped = q.rows[: q.limit]
            if self.faults.no_pagination:
                return 200, {"status": "Complete", "results": _fields(capped[:ROWS_PER_PAGE]), "statistics":
                             {k: v for k, v in q.stats.items() if k != "resultCount"}}
            page = min(int(body.get("maxItems", ROWS_PER_PAGE)) or ROWS_PER_PAGE, ROWS_PER_PAGE)
            offset = int(body.get("nextToken", "0:0").split(":")[1]) if body.get("nextToken") else 0
            out: dict[str, Any] = {"status": "Complete", "results": _fields(capped[offset:offset + page]),
                                   "statistics": q.stats}
            if offset + page < len(capped):
                out["nextToken"] = f"{q.qid}:{offset + page}"
            return 200, out

    def _op_StopQuery(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            q = self.queries.get(body.get("queryId", ""))
            if q is None:
                return _error("ResourceNotFoundException", "Query does not exist.")
            if q.observed_terminal or q.stopped:
                return _error("InvalidParameterException", "Query is not running.")
            q.stopped = True
        return 200, {"success": True}


def _group_name(identifier: str) -> str:
    """A log group name from a name or an ARN (``arn:aws:logs:<region>:<account>:log-group:<name>[:*]``)."""
    if identifier.startswith("arn:"):
        name = identifier.split(":log-group:", 1)[1]
        return name.removesuffix(":*")
    return identifier


def _indexed_sql(names: tuple[str, ...], policies: dict[str, IndexPolicy | None], fields: list[str],
                 now_ms: int) -> str:
    """SQL condition on the engine's events table: the events indexed for every field of ``fields`` (what a
    filterIndex query can see), from each log group's policy history and the 30-day index life."""
    from collector.insights.log_identifier import log_identifier
    from collector.insights.sql import sql_literal
    from tests.support.fake_field_indexes import INDEX_RETENTION_MS

    per_group = []
    for g in names:
        pol = policies[g]
        assert pol is not None
        conds = [f'"@ingestionTime" > {now_ms - INDEX_RETENTION_MS}']
        for f in fields:
            spans = [f'("@ingestionTime" >= {a}' + ("" if b is None else f' AND "@ingestionTime" < {b}') + ")"
                     for a, b in pol.intervals(f)]
            conds.append("(" + (" OR ".join(spans) or "FALSE") + ")")
        per_group.append(f'("@log" = {sql_literal(log_identifier(FAKE_ACCOUNT_ID, g))} AND ' + " AND ".join(conds) + ")")
    return "(" + " OR ".join(per_group) + ")"


def _leading_time_filter(query: str) -> int | None:
    """N of a first command ``filter toMillis(@timestamp) <= N`` (what the runner prepends), else None."""
    import re

    for line in query.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            m = re.match(r"\s*filter toMillis\(@timestamp\) <= (\d+)\s*$", line)
            return int(m.group(1)) if m else None
    return None


def _page_metric_data(doc: dict[str, Any], offset: int, size: int) -> bytes:
    """One page of a full GetMetricData answer: datapoints ``offset .. offset+size`` across all results (in result
    order), results with no datapoint on this page omitted, ``NextToken`` when more remain."""
    flat = [(i, t, v) for i, r in enumerate(doc.get("MetricDataResults", []))
            for t, v in zip(r.get("Timestamps", []), r.get("Values", []))]
    chunk = flat[offset:offset + size]
    results: dict[int, dict[str, Any]] = {}
    for i, t, v in chunk:
        src = doc["MetricDataResults"][i]
        r = results.setdefault(i, {"Id": src["Id"], "Label": src.get("Label", src["Id"]), "Timestamps": [],
                                   "Values": [], "StatusCode": "Complete"})
        r["Timestamps"].append(t)
        r["Values"].append(v)
    more = offset + size < len(flat)
    for r in results.values():
        r["StatusCode"] = "PartialData" if more else "Complete"
    out: dict[str, Any] = {"MetricDataResults": list(results.values()), "Messages": []}
    if more:
        out["NextToken"] = str(offset + size)
    return json.dumps(out).encode()


def _fields(rows: Rows) -> list[list[dict[str, str]]]:
    out = []
    for i, row in enumerate(rows):
        out.append([{"field": f, "value": v} for f, v in row if v is not None] + [{"field": "@ptr", "value": f"p{i}"}])
    return out


def _error(code: str, message: str) -> tuple[int, dict[str, Any]]:
    return 400, {"__type": code, "message": message}


class _Handler(BaseHTTPRequestHandler):
    server_ref: FakeLogsInsightsServer
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes: with Nagle on, the body waits for the client's delayed ACK of the
    # headers (about 40 ms on Linux loopback), which made every call take ~44 ms instead of ~1 ms.
    disable_nagle_algorithm = True

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b"{}"
        target = self.headers.get("X-Amz-Target", "")
        op = target.split(".", 1)[1] if "." in target else target
        srv = self.server_ref
        if srv.upstream and not (target.startswith("Logs_20140328.") and hasattr(srv, "_op_" + op)):
            self._proxy(raw)
            return
        try:
            body = json.loads(raw or b"{}")
            status, payload = self.server_ref.handle(op, body)
        except Exception as exc:  # noqa: BLE001 - a bug in the fake must surface as a 500, not a hang
            status, payload = 500, {"__type": "InternalFailure", "message": repr(exc)}
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/x-amz-json-1.1")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("x-amzn-RequestId", uuid.uuid4().hex)
        self.end_headers()
        self.wfile.write(data)

    def _proxy(self, raw: bytes) -> None:
        """Forward a request this server does not implement (e.g. CloudWatch, DynamoDB) to the upstream server."""
        target = self.headers.get("X-Amz-Target", "")
        page = self.server_ref.faults.metric_page_datapoints
        token: str | None = None
        if page and target.endswith(".GetMetricData"):
            body = json.loads(raw or b"{}")
            token = body.pop("NextToken", None) or "0"
            raw = json.dumps(body).encode()
            with self.server_ref._lock:
                self.server_ref.calls.append(("GetMetricData", body))
        status, headers, data = self._forward(raw)
        if token is not None and status == 200:
            data = _page_metric_data(json.loads(data), int(token), page)
        self.send_response(status)
        for k, v in headers:
            if k.lower() not in ("content-length", "connection", "transfer-encoding", "server", "date"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _forward(self, raw: bytes) -> tuple[int, list[tuple[str, str]], bytes]:
        import http.client
        from urllib.parse import urlsplit

        up = urlsplit(self.server_ref.upstream or "")
        conn = http.client.HTTPConnection(up.hostname or "127.0.0.1", up.port, timeout=30)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length", "connection")}
        try:
            conn.request("POST", self.path, body=raw, headers=headers)
            resp = conn.getresponse()
            return resp.status, resp.getheaders(), resp.read()
        finally:
            conn.close()

    def log_message(self, format: str, *args: Any) -> None:
        pass


def main(argv: list[str] | None = None) -> None:
    """``python -m tests.support.fake_logs_insights --logs DIR [--port P] [--latency S]``: serve ``DIR/*.log`` (one log
    group ``/aws/lambda/<file stem>`` per file) on 127.0.0.1 until interrupted, to try
    ``idemwatch collect cloudwatch --endpoint-url http://127.0.0.1:P --region us-east-1`` without AWS."""
    import argparse
    from pathlib import Path

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("--logs", type=Path, required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--latency", type=float, default=0.5, help="seconds each query stays Running")
    args = ap.parse_args(argv)
    srv = FakeLogsInsightsServer(latency_s=args.latency, port=args.port)
    for f in sorted(args.logs.glob("*.log")):
        srv.put_events(f"/aws/lambda/{f.stem}", load_export_lines(f))
    srv.start()
    print(f"fake CloudWatch Logs on {srv.url} ({len(srv.groups)} log groups); Ctrl-C to stop", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        srv.stop()


if __name__ == "__main__":  # pragma: no cover
    main()
