"""Logs Insights query runner: StartQuery / GetQueryResults / StopQuery at scale.

What it adds over "start a query and poll it every second" (e.g. awswrangler's ``read_logs``):

- adaptive concurrency (``adaptive.ConcurrencyLimit``): it starts with a couple of queries, grows while they start
  cleanly, halves on ``LimitExceededException`` (the account's concurrent-query quota, shared with dashboards and
  people, is full) and never exceeds ``max_concurrency``; a freed slot starts the next task of any job at once (a
  pipeline, not batches);
- StartQuery and GetQueryResults call rates kept under their documented TPS quotas (``adaptive.AdaptiveRate``),
  halved on ``ThrottlingException``; throttled and quota-full calls retried with full-jitter exponential backoff;
- polling timed by how long this run's queries take (``adaptive.DurationEstimate``), all terminal states handled
  (Complete, Failed, Cancelled, Timeout, Unknown), and its own per-query deadline after which it calls StopQuery;
- results read to the end with ``nextToken`` when the installed botocore supports it (up to 100,000 rows per query),
  and a window whose result is still capped split into ``[a, m]``, ``[m + 1, b]`` and re-run, recursively; a result
  that cannot be split further is reported truncated, never as complete;
- rows returned while ``Running`` (partial results) are never used;
- query statistics and API call counts recorded for the manifest and the cost report.

Thread-safety: one runner may be used by one ``run`` call at a time; botocore clients are thread-safe.
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

from collector.cloudwatch.adaptive import AdaptiveRate, ConcurrencyLimit, DurationEstimate
from collector.cloudwatch.backoff import Backoff, PollSchedule
from collector.cloudwatch.constants import (
    DEFAULT_INITIAL_CONCURRENCY,
    DEFAULT_MAX_CONCURRENCY,
    DEFAULT_QUERY_DEADLINE_S,
    GET_QUERY_RESULTS_TPS,
    MAX_LOG_GROUPS_PER_QUERY,
    MAX_QUERY_LIMIT,
    ROWS_PER_PAGE,
    START_QUERY_TPS,
    TERMINAL_STATUSES,
)
from collector.cloudwatch.exceptions import CloudWatchCollectorError
from collector.cloudwatch.types import QueryAttempt, QueryStats, WindowResult
from collector.cloudwatch.windows import Window, split_window
from idemwatch.aws import error_code, is_throttling, translate

QUOTA_FULL = "LimitExceededException"
"""StartQuery's answer when the account's concurrent-query quota is full (it is not a call-rate throttle)."""

DEADLINE_EXCEEDED = "DeadlineExceeded"
"""Pseudo-status of a query we stopped (StopQuery) because our own deadline passed."""

RETRIED_STATUSES = frozenset({"Failed", "Unknown", "Cancelled"})
"""Terminal statuses after which the same window is tried again (up to ``max_retries`` times): Failed and Unknown
are usually transient on the service side; Cancelled means someone else stopped our query."""

SPLIT_STATUSES = frozenset({"Timeout", DEADLINE_EXCEEDED})
"""Terminal statuses meaning the window was too big to scan in time: split it (or retry if it cannot be split)."""


WINDOW_FILTER = "filter toMillis(@timestamp) <= {end_ms}"
"""Prepended to every query so a window ``[a, b]`` covers exactly ``a*1000 .. b*1000+999`` ms.

StartQuery's endTime is in seconds and the service compares it at millisecond precision: "EndTime is inclusive but
not at second level. Internally they convert to milliseconds straight" (CloudWatch team, aws/aws-sdk#280). A query
over ``[a, b]`` therefore misses events in ``b.001 .. b.999``, and adjacent windows ``[a, m]``, ``[m + 1, b]`` lose the
sub-second events of second ``m``. The runner asks for ``[a, b + 1]`` and filters ``@timestamp <= b.999``: adjacent
windows then share no event and miss none."""


def restrict_to_window(query: str, w: Window) -> str:
    """``query`` with the window filter as its first command (comments before it kept, text after it unchanged)."""
    lines = query.splitlines()
    first = next((i for i, ln in enumerate(lines) if ln.strip() and not ln.lstrip().startswith("#")), None)
    if first is None:
        raise CloudWatchCollectorError("the query has no command")
    flt = WINDOW_FILTER.format(end_ms=w.end * 1000 + 999)
    return "\n".join(lines[:first] + [flt, "| " + lines[first].lstrip()] + lines[first + 1:])


def supports_result_pagination(client: Any) -> bool:
    """True when the client's GetQueryResults model has ``nextToken`` (botocore >= 1.40-ish: up to 100,000 rows per
    query, 10,000 per page); older models cap a query at 10,000 rows with no way to page."""
    try:
        shape = client.meta.service_model.operation_model("GetQueryResults").input_shape
        return "nextToken" in shape.members
    except Exception:  # noqa: BLE001 - unknown client: be conservative
        return False


def batches(log_groups: Sequence[str], size: int = MAX_LOG_GROUPS_PER_QUERY) -> list[tuple[str, ...]]:
    """Split log group names into batches of at most ``size`` (StartQuery takes up to 50 log groups)."""
    if not log_groups:
        raise ValueError("no log groups to query")
    return [tuple(log_groups[i:i + size]) for i in range(0, len(log_groups), size)]


@dataclass
class ProgressEvent:
    """Sent to ``on_progress``: ``kind`` is ``planned`` (n = tasks added), ``started``, ``done``, ``split``,
    ``retry`` or ``throttled``; ``window``/``status`` describe the task."""

    kind: str
    window: Window | None = None
    status: str | None = None
    n: int = 1


@dataclass(frozen=True)
class QueryJob:
    """One query to run: over ``windows`` (epoch s, inclusive) x batches of <= 50 of ``log_groups``;
    ``split_align_s`` as in ``LogsInsightsRunner.run``."""

    query: str
    log_groups: tuple[str, ...]
    windows: tuple[Window, ...]
    split_align_s: int | None = 1


@dataclass
class _Task:
    root: int  # index of the WindowResult this task contributes to
    query: str
    window: Window
    log_groups: tuple[str, ...]
    retries: int = 0
    delay_s: float = 0.0  # backoff before a retry, slept in the worker (the scheduler never blocks)


@dataclass
class RunnerConfig:
    """Tunables. Times in seconds (wall clock), rates in calls per second.

    max_concurrency: most queries in flight at once (``--max-concurrency``; see ``constants.DEFAULT_MAX_CONCURRENCY``).
    initial_concurrency: queries in flight before any started cleanly (the limit then adapts: ``adaptive``).
    deadline_s: our own limit per query, then StopQuery.
    max_retries: re-runs of one window after Failed/Unknown/Cancelled (or Timeout of an unsplittable window).
    limit: StartQuery ``limit``; None = 100,000 with result pagination, else 10,000.
    paginate: None = detect from the botocore model; False forces the 10,000-row, split-only mode.
    max_starts_per_s / max_polls_per_s: StartQuery / GetQueryResults calls per second over all queries, at most
        (the documented TPS quotas by default); the rates start there and halve on throttling. <= 0 disables.
    overall_deadline_s: wall-clock budget of one ``run_jobs`` call (None = none). When it passes, queries in flight
        are stopped (StopQuery), queued ones are never started, and their windows end ``failed`` with
        ``OVERALL_DEADLINE`` in the error; windows already complete are kept.
    """

    max_concurrency: int = DEFAULT_MAX_CONCURRENCY
    initial_concurrency: int = DEFAULT_INITIAL_CONCURRENCY
    deadline_s: float = DEFAULT_QUERY_DEADLINE_S
    max_retries: int = 2
    limit: int | None = None
    paginate: bool | None = None
    poll: PollSchedule = field(default_factory=PollSchedule)
    backoff: Backoff = field(default_factory=Backoff)
    max_starts_per_s: float = START_QUERY_TPS
    max_polls_per_s: float = GET_QUERY_RESULTS_TPS
    overall_deadline_s: float | None = None


OVERALL_DEADLINE = "overall deadline (--deadline) reached"
"""Error text of windows left unfinished because the run's wall-clock budget ran out."""


class LogsInsightsRunner:
    """Runs one Logs Insights query over many windows and log groups.

    ``client``: a boto3 ``logs`` client (create it with botocore retries off: this class owns the retry policy).
    ``sleep``, ``clock`` (monotonic seconds) and ``rng`` (uniform [0, 1)) are injectable for tests.
    ``api_calls`` counts calls by operation name, including retried ones.
    """

    def __init__(
        self,
        client: Any,
        config: RunnerConfig | None = None,
        *,
        on_progress: Callable[[ProgressEvent], None] | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        rng: Callable[[], float] = random.random,
    ) -> None:
        self.client = client
        self.config = config or RunnerConfig()
        if self.config.max_concurrency < 1:
            raise ValueError("max_concurrency must be >= 1")
        self.paginate = supports_result_pagination(client) if self.config.paginate is None else self.config.paginate
        self.limit = self.config.limit or (MAX_QUERY_LIMIT if self.paginate else ROWS_PER_PAGE)
        self.on_progress = on_progress or (lambda e: None)
        self.sleep, self.clock, self.rng = sleep, clock, rng
        self.api_calls: Counter[str] = Counter()
        self.stats = QueryStats()
        self._lock = threading.Lock()
        self.concurrency = ConcurrencyLimit(self.config.max_concurrency, self.config.initial_concurrency)
        self.rates = {"StartQuery": AdaptiveRate(self.config.max_starts_per_s, clock=clock, sleep=sleep),
                      "GetQueryResults": AdaptiveRate(self.config.max_polls_per_s, clock=clock, sleep=sleep)}
        self.durations = DurationEstimate(self.config.poll.initial_s, self.config.poll.max_s)
        self._abort = threading.Event()
        self._end_at: float | None = None

    def _past_end(self) -> bool:
        return self._end_at is not None and self.clock() >= self._end_at

    def report(self) -> dict[str, Any]:
        """What the adaptive limits did, for the manifest: the concurrency reached and its ceiling, the quota
        collisions (LimitExceededException), throttled calls per operation and the final call rates (per second)."""
        return {"max_concurrency": self.config.max_concurrency, "peak_concurrency": self.concurrency.peak,
                "final_concurrency_limit": self.concurrency.limit, "quota_collisions": self.concurrency.collisions,
                "throttled": {op: r.throttles for op, r in self.rates.items()},
                "final_rates_per_s": {op: round(r.rate, 2) for op, r in self.rates.items()}}

    # ------------------------------------------------------------------ public
    def run(self, query: str, log_groups: Sequence[str], windows: Sequence[Window], *,
            split_align_s: int | None = 1) -> list[WindowResult]:
        """Run ``query`` over every window and every batch of <= 50 log groups.

        ``split_align_s``: a capped or timed-out window is split at a multiple of this many seconds (60 for tables
        binned by minute, so no bin is split between queries); None = never split (the result is flagged
        truncated instead). Returns one WindowResult per (window, log-group batch), windows in the given order.
        Raises CloudWatchCollectorError (missing credentials, access denied, unknown log group, malformed query,
        throttled after every retry); queries still running are stopped first.
        """
        return self.run_jobs([QueryJob(query, tuple(log_groups), tuple(windows), split_align_s)])[0]

    def run_jobs(self, jobs: Sequence[QueryJob]) -> list[list[WindowResult]]:
        """Run several queries through one pool, so the concurrency limit holds over all of them and a slot freed by
        one table's query is taken by the next task of any table. Returns, per job, what ``run`` returns."""
        results: list[WindowResult] = []
        aligns: list[int | None] = []
        owner: list[int] = []
        tasks: list[_Task] = []
        for j, job in enumerate(jobs):
            if not job.query.strip():
                raise CloudWatchCollectorError("empty query")
            for w in job.windows:
                for lg in batches(list(job.log_groups)):
                    results.append(WindowResult(window=w, log_groups=lg))
                    aligns.append(job.split_align_s)
                    owner.append(j)
                    tasks.append(_Task(len(results) - 1, job.query, w, lg))
        pieces: dict[int, list[tuple[Window, list[dict[str, str | None]]]]] = {i: [] for i in range(len(results))}
        self.on_progress(ProgressEvent("planned", n=len(tasks)))
        self._abort.clear()
        budget = self.config.overall_deadline_s
        self._end_at = None if budget is None else self.clock() + budget
        pending: set[Future] = set()
        queue = list(tasks)
        # as many workers as the limit may ever allow; ConcurrencyLimit decides how many hold a running query
        with ThreadPoolExecutor(max_workers=self.config.max_concurrency, thread_name_prefix="logs-insights") as pool:
            futures: dict[Future, _Task] = {}

            def submit() -> None:
                if queue and self._past_end():  # out of time: what is still queued is never started
                    for t in queue:
                        res = results[t.root]
                        res.status, res.error = "failed", f"not started: {OVERALL_DEADLINE}"
                        self.on_progress(ProgressEvent("done", t.window, "failed"))
                    queue.clear()
                while queue and len(pending) < self.config.max_concurrency:
                    t = queue.pop(0)
                    f = pool.submit(self._execute, t)
                    futures[f] = t
                    pending.add(f)

            submit()
            try:
                while pending:
                    done, _ = wait(pending, return_when=FIRST_COMPLETED)
                    for f in done:
                        pending.discard(f)
                        task = futures.pop(f)
                        attempt, rows = f.result()  # raises fatal errors
                        res = results[task.root]
                        res.attempts.append(attempt)
                        res.stats.add(attempt.stats)
                        queue[:0] = self._next(task, attempt, rows, res, pieces[task.root], aligns[task.root])
                    submit()
            except BaseException:
                self._abort.set()  # running workers stop their queries and return
                raise
        for i, res in enumerate(results):
            ordered = sorted(pieces[i], key=lambda p: p[0])
            res.sub_windows = [w for w, _ in ordered]
            res.rows = [r for _, rows in ordered for r in rows]
            res.truncated_windows.sort()
            if res.status == "complete" and res.truncated_windows:
                res.status = "truncated"
        out: list[list[WindowResult]] = [[] for _ in jobs]
        for i, res in enumerate(results):
            out[owner[i]].append(res)
        return out

    # ------------------------------------------------------------------ scheduling
    def _next(self, task: _Task, attempt: QueryAttempt, rows: list[dict[str, str | None]], res: WindowResult,
              pieces: list[tuple[Window, list[dict[str, str | None]]]], align: int | None) -> list[_Task]:
        """Decide what follows a finished attempt; returns new tasks (run before the rest of the queue)."""
        status = attempt.status
        if status == "Complete" and not attempt.capped:
            pieces.append((task.window, rows))
            self.on_progress(ProgressEvent("done", task.window, status))
            return []
        if self._past_end():  # no split, no retry after the overall deadline
            if status == "Complete":
                pieces.append((task.window, rows))
                res.truncated_windows.append(task.window)
            else:
                res.status = "failed"
                res.error = f"query over [{task.window.start}, {task.window.end}] stopped: {OVERALL_DEADLINE}"
            self.on_progress(ProgressEvent("done", task.window, "truncated" if status == "Complete" else "failed"))
            return []
        if status == "Complete" or status in SPLIT_STATUSES:
            halves = split_window(task.window, align) if align else None
            if halves is not None:
                self.on_progress(ProgressEvent("split", task.window, status, n=2))
                return [_Task(task.root, task.query, h, task.log_groups) for h in halves]
            if status == "Complete":  # capped and cannot split: keep what we have, say it is incomplete
                pieces.append((task.window, rows))
                res.truncated_windows.append(task.window)
                self.on_progress(ProgressEvent("done", task.window, "truncated"))
                return []
        if task.retries < self.config.max_retries:
            self.on_progress(ProgressEvent("retry", task.window, status))
            delay = self.config.backoff.delay(task.retries, self.rng)
            return [_Task(task.root, task.query, task.window, task.log_groups, task.retries + 1, delay)]
        res.status = "failed"
        res.error = f"query over [{task.window.start}, {task.window.end}] ended {status} after {task.retries + 1} tries"
        self.on_progress(ProgressEvent("done", task.window, "failed"))
        return []

    # ------------------------------------------------------------------ one query
    def _call(self, op: str, **kwargs: Any) -> dict[str, Any]:
        with self._lock:
            self.api_calls[op] += 1
        method = {"StartQuery": self.client.start_query, "GetQueryResults": self.client.get_query_results,
                  "StopQuery": self.client.stop_query}[op]
        return method(**kwargs)

    def _with_retry(self, op: str, resource: str, **kwargs: Any) -> dict[str, Any]:
        """Call ``op`` at its adaptive rate, retrying ThrottlingException with full-jitter backoff (the rate
        halves each time)."""
        rate = self.rates.get(op)
        attempt = 0
        while True:
            if rate is not None:
                rate.acquire()
            try:
                out = self._call(op, **kwargs)
            except Exception as exc:
                # LimitExceededException (the concurrent-query quota, not a rate) is _start's to handle
                if is_throttling(exc) and error_code(exc) != QUOTA_FULL \
                        and attempt < self.config.backoff.max_attempts and not self._abort.is_set():
                    if rate is not None:
                        rate.throttled()
                    self.on_progress(ProgressEvent("throttled", status=error_code(exc)))
                    self.sleep(self.config.backoff.delay(attempt, self.rng))
                    attempt += 1
                    continue
                raise translate(exc, action="logs:" + op, resource=resource) from exc
            if rate is not None:
                rate.succeeded()
            return out

    def _start(self, resource: str, params: dict[str, Any]) -> str | None:
        """StartQuery holding a concurrency permit (kept on success: the caller releases it when the query ends).
        LimitExceededException halves the limit, gives the permit back and retries after a full-jitter backoff;
        None when the run is aborted or out of time first. Raises ThrottledError once the backoff is spent."""
        collisions = 0
        while True:
            epoch = self.concurrency.acquire(lambda: self._abort.is_set() or self._past_end())
            if epoch is None:
                return None
            try:
                qid = self._with_retry("StartQuery", resource, **params)["queryId"]
            except Exception as exc:
                self.concurrency.release()
                if QUOTA_FULL in (error_code(exc), error_code(exc.__cause__) if exc.__cause__ else None):
                    self.concurrency.collided(epoch)
                    self.on_progress(ProgressEvent("throttled", status=QUOTA_FULL))
                    if collisions < self.config.backoff.max_attempts and not self._abort.is_set():
                        self.sleep(self.config.backoff.delay(collisions, self.rng))
                        collisions += 1
                        continue
                raise
            self.concurrency.started_cleanly()  # a retry that got in proves a free slot as well as a first try
            return qid

    def _execute(self, task: _Task) -> tuple[QueryAttempt, list[dict[str, str | None]]]:
        """StartQuery, poll to a terminal status or our deadline, read all pages. Worker thread."""
        names = list(task.log_groups)
        resource = names[0] if len(names) == 1 else f"{len(names)} log groups ({names[0]}, ...)"
        params: dict[str, Any] = {"startTime": task.window.start, "endTime": task.window.end + 1,
                                  "queryString": restrict_to_window(task.query, task.window), "limit": self.limit}
        params["logGroupNames"] = names
        if task.delay_s > 0:
            self.sleep(task.delay_s if self._end_at is None else min(task.delay_s, max(0.0, self._end_at - self.clock())))
        not_run = QueryAttempt(query_id="", window=task.window, log_groups=task.log_groups, status=DEADLINE_EXCEEDED)
        if self._past_end():
            return not_run, []
        self.on_progress(ProgressEvent("started", task.window))
        qid = self._start(resource, params)
        if qid is None:
            return not_run, []
        held = True

        def ended() -> None:  # the query no longer holds a slot of the account's quota: the permit goes back
            nonlocal held
            if held:
                held = False
                self.concurrency.release()

        try:
            return self._follow(qid, task, ended)
        finally:
            ended()

    def _follow(self, qid: str, task: _Task, ended: Callable[[], None]) -> tuple[QueryAttempt,
                                                                              list[dict[str, str | None]]]:
        """Poll query ``qid`` to a terminal status (or stop it at our deadline; ``ended`` once it is over on the
        service side) and read its result pages."""
        t0 = self.clock()
        deadline = t0 + self.config.deadline_s if self._end_at is None else min(t0 + self.config.deadline_s,
                                                                                 self._end_at)
        attempt = QueryAttempt(query_id=qid, window=task.window, log_groups=task.log_groups, status="Running")
        wait = self.durations.first_poll_s()
        page_args: dict[str, Any] = {"maxItems": ROWS_PER_PAGE} if self.paginate else {}
        last_running: float | None = None
        while True:
            now = self.clock()
            if now >= deadline or self._abort.is_set():
                self._stop(qid)
                attempt.status = DEADLINE_EXCEEDED
                attempt.duration_s = self.clock() - t0
                return attempt, []
            self.sleep(min(wait, max(0.0, deadline - now)))
            if self.clock() >= deadline:
                continue  # loop head stops it
            asked = self.clock() - t0  # the service answers for this moment (the reply's trip is not the query's)
            resp = self._with_retry("GetQueryResults", qid, queryId=qid, **page_args)
            status = resp.get("status", "Unknown")
            if status in TERMINAL_STATUSES:
                break
            # Scheduled / Running: any rows here are partial results; never used. After a first poll, look again at
            # the typical duration (DurationEstimate.second_poll_s); after that, or before any estimate, less and
            # less often.
            again = self.durations.second_poll_s(asked, wait) if last_running is None else None
            wait = again if again is not None \
                else min(self.config.poll.max_s, max(wait, self.config.poll.initial_s) * self.config.poll.multiplier)
            last_running = asked
        ended()  # reading the pages of a finished query takes no slot
        attempt.status = status
        attempt.stats = QueryStats.from_api(resp.get("statistics"))
        attempt.duration_s = self.clock() - t0
        if status != "Complete":
            return attempt, []
        self.durations.add(asked, last_running)
        rows = [_row(r) for r in resp.get("results", [])]
        attempt.pages = 1
        token = resp.get("nextToken") if self.paginate else None
        while token:
            page = self._with_retry("GetQueryResults", qid, queryId=qid, nextToken=token, **page_args)
            rows.extend(_row(r) for r in page.get("results", []))
            attempt.pages += 1
            token = page.get("nextToken")
        attempt.rows = len(rows)
        result_count = (resp.get("statistics") or {}).get("resultCount")
        # Capped: the query limit was reached, or the service says more rows exist than we received. A result that
        # is an exact multiple of the 10,000-row page is treated as capped too (one extra split, never a silent cap).
        attempt.capped = (len(rows) >= self.limit
                          or (result_count is not None and float(result_count) > len(rows))
                          or (len(rows) > 0 and len(rows) % ROWS_PER_PAGE == 0))
        return attempt, rows

    def _stop(self, qid: str) -> None:
        """StopQuery; a query that already ended answers InvalidParameterException, which is fine."""
        try:
            self._call("StopQuery", queryId=qid)
        except Exception as exc:
            if error_code(exc) not in ("InvalidParameterException", "ResourceNotFoundException") and not is_throttling(exc):
                raise translate(exc, action="logs:StopQuery", resource=qid) from exc



def _row(fields: list[dict[str, str]]) -> dict[str, str | None]:
    """One GetQueryResults row (list of {field, value}) as a dict; ``@ptr`` (the record pointer) dropped."""
    return {f["field"]: f.get("value") for f in fields if f.get("field") != "@ptr"}

