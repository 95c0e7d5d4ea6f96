"""The standard tables from a local ``EventStore``: each standard query compiled by the offline engine, its typed
result converted to the table's column types in SQL, fetched as Arrow and written by ``collector.parquet`` (the
writer ``collect cloudwatch`` uses), with the post-processing of ``collector.postprocess``.
"""

from __future__ import annotations

import itertools
import queue
import threading
import time
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from collector.exceptions import CollectError
from collector.insights.engine import prepare_query, seconds_to_ms
from collector.insights.sql import Typed, as_num, as_text, harden_connection, quote_ident
from collector.insights.types import ValueType
from collector.parquet import arrow_schema, write_parquet
from collector.postprocess import expand_library_signals, filled_columns, split_log_identifier, stuck_key_ages
from collector.tables import TABLES, Table

__all__ = ["TABLE_WORKERS", "Progress", "write_standard_tables"]

Progress = Callable[[str, str, int, int], None]
"""``progress(stage, item, done, total)``: stage "ingest" (item = file path) or "tables" (item = table name)."""

_BATCH_ROWS = 100_000
"""Rows per Arrow batch streamed from a query into its Parquet file."""
_ORDER_ALIASES = ("__iw_k", "__iw_q")
"""Names given to the two columns ``CompiledQuery.unordered_sql`` adds (sort key, ingest order)."""
_DUCKDB_CHUNK_ROWS = 122_880
"""DuckDB's row group size: a sorted result streams in pieces of this many rows, each cut at ``_BATCH_ROWS``."""


def _iso(dt: datetime | None) -> str | None:
    return None if dt is None else dt.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _epoch_to_dt(seconds: float | None) -> datetime | None:
    return None if seconds is None else datetime.fromtimestamp(float(seconds), tz=UTC)


TABLE_WORKERS = 2
"""Standard tables written at the same time by ``collect_local``, each on its own DuckDB connection to the events
database (``EventStore.cursors``). One query alone leaves a core idle part of the time (its Arrow batches, Parquet
writing and single-threaded plan steps): at 1M events the ten tables took 0.65x the wall time and 0.85x the CPU of
one at a time (1.2 s against 1.85 s, 3 interleaved runs on 2 cores). DuckDB's memory limit is the database's, shared
by both."""
_LONGEST_FIRST = ("trail", "stuck_keys", "library_signals", "invocations")
"""Tables started first when several run at once (the slowest at 1M), so that the short ones fill in beside them."""


class _StoreOn:
    """The store's events table seen through another connection (what ``prepare_query`` reads of a store)."""

    def __init__(self, connection: Any, table: str) -> None:
        self.connection, self.table = connection, table


def write_standard_tables(store: Any, out: Path, queries: Mapping[str, str], since: float | None,
                          until: float | None, progress: Progress | None = None, *, workers: Sequence[Any] = ()
                          ) -> tuple[dict[str, Any], dict[str, Any]]:
    """Run every standard query over ``store`` (an ``EventStore``) and write ``out/tables/<name>.parquet``.

    ``since``/``until``: window in epoch seconds, inclusive (None = unbounded). The window end of the stuck-key
    ages is ``until``, else the last event in the window. ``workers``: connections to the store's database
    (``EventStore.cursors``, made before the database is hardened); with two or more, that many tables are written at
    a time, one per connection (the files are the same bytes). Empty: one at a time on ``store.connection``.
    ``progress("tables", name, done, total)`` is called from this thread: before the first table (``done`` 0) and
    as each table is written (``name``: that table). Returns ``(tables, window)``: per table ``{path, rows,
    query_seconds[, bad_values: {column: values that did not convert, written null}]}`` in ``TABLES`` order
    (``query_seconds``: that table's own wall time, which overlaps another's when several run at once), and the
    window as ISO-8601 (``since``, ``until``, ``data_start``, ``data_end``, ``window_end``).

    Raises:
        CollectError: a query's columns are not its table's. collector.insights.QueryError: a query does not compile.
        With several workers, the first failing table in ``TABLES`` order is raised, after the others ran.
    """
    where, params = _window_sql(since, until)
    lo, hi = store.connection.execute(f'SELECT min("@timestamp"), max("@timestamp") FROM {quote_ident(store.table)}'
                                      f'{where}', params).fetchall()[0]
    data_start = None if lo is None else datetime.fromtimestamp(lo / 1000, tz=UTC)
    data_end = None if hi is None else datetime.fromtimestamp(hi / 1000, tz=UTC)
    window_end = _epoch_to_dt(until) if until is not None else data_end
    window_end_ms = None if window_end is None else round(window_end.timestamp() * 1000)

    def write_one(on: Any, name: str) -> dict[str, Any]:
        table = TABLES[name]
        started = time.perf_counter()
        path = out / "tables" / f"{name}.parquet"
        bad: dict[str, int]
        if name == "library_signals":
            n, bad = _write_library_signals(on, table, queries[name], since, until, path), {}
        elif name == "stuck_keys":
            n, bad = _write_typed(on, table, queries[name], since, until,
                                  lambda reader: write_parquet(stuck_key_ages(
                                      reader.read_all().cast(arrow_schema(table)), window_end_ms), table, path))
        else:
            n, bad = _write_typed(on, table, queries[name], since, until,
                                  lambda reader: write_parquet(_split_batches(reader), table, path))
        entry: dict[str, Any] = {"path": f"tables/{name}.parquet", "rows": n,
                                 "query_seconds": round(time.perf_counter() - started, 4)}
        if bad:
            entry["bad_values"] = bad
        return entry

    names = list(TABLES)
    done: dict[str, dict[str, Any]] = {}
    if len(workers) < 2:
        on = _StoreOn(workers[0], store.table) if workers else store
        for i, name in enumerate(names):
            if progress is not None:
                progress("tables", name, i, len(names))
            done[name] = write_one(on, name)
    else:
        harden_connection(store.connection)  # as every query does first: once here, not racing in the threads
        done = _write_at_once(store.table, names, workers, write_one, progress)
    info = {name: done[name] for name in names}
    window = {"since": _iso(_epoch_to_dt(since)), "until": _iso(_epoch_to_dt(until)),
              "data_start": _iso(data_start), "data_end": _iso(data_end), "window_end": _iso(window_end)}
    return info, window


def _write_at_once(table: str, names: list[str], workers: Sequence[Any],
                   write_one: Callable[[Any, str], dict[str, Any]], progress: Progress | None
                   ) -> dict[str, dict[str, Any]]:
    """``write_one(store view, name)`` for every name, ``len(workers)`` at a time, each on a free connection of
    ``workers``; the longest tables first. Returns name -> entry. When tables fail, every table still runs (so the
    error does not depend on which thread got there first) and the first failure in ``names`` order is raised.

    The tables written at once share DuckDB's memory limit, and which ones overlap depends on timing. Writing them
    together is for speed only: a table whose query ran out of memory (``duckdb.OutOfMemoryException``) is written
    again alone once the others are done, with the whole limit (its file is renamed into place only when complete,
    ``parquet.write_parquet``); only a second failure is raised."""
    import duckdb

    from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

    free: queue.SimpleQueue = queue.SimpleQueue()
    for con in workers:
        free.put(_StoreOn(con, table))
    order = sorted(names, key=lambda n: _LONGEST_FIRST.index(n) if n in _LONGEST_FIRST else len(_LONGEST_FIRST))

    def task(name: str) -> dict[str, Any]:
        on = free.get()  # one is free: no more tasks run than there are connections
        try:
            return write_one(on, name)
        finally:
            free.put(on)

    if progress is not None:
        progress("tables", order[0], 0, len(names))
    with ThreadPoolExecutor(max_workers=len(workers), thread_name_prefix="idemwatch-table") as pool:
        futures = {pool.submit(task, name): name for name in order}
        pending, finished = set(futures), 0
        while pending:
            ended, pending = wait(pending, return_when=FIRST_COMPLETED)
            for f in ended:
                finished += 1
                if progress is not None:
                    progress("tables", futures[f], finished, len(names))
    done: dict[str, dict[str, Any]] = {}
    errors: dict[str, BaseException] = {}
    for f, name in futures.items():
        exc = f.exception()
        if exc is None:
            done[name] = f.result()
        elif isinstance(exc, duckdb.OutOfMemoryException):
            on = free.get()
            try:
                done[name] = write_one(on, name)  # alone: the whole memory limit
            except Exception as again:  # noqa: BLE001 - raised below, in names order
                errors[name] = again
            finally:
                free.put(on)
        else:
            errors[name] = exc
    if errors:
        raise errors[min(errors, key=names.index)]  # the first failed table's exception
    return done


def _split_batches(reader: pa.RecordBatchReader) -> pa.RecordBatchReader:
    """``reader`` with ``postprocess.split_log_identifier`` applied to each batch (same schema)."""
    return pa.RecordBatchReader.from_batches(reader.schema, (split_log_identifier(b) for b in reader))


def _convert_sql(t: Typed, duck_type: str) -> str:
    """SQL converting an engine value to a table column type (null when it does not convert)."""
    if duck_type == "VARCHAR":
        return as_text(t)
    if duck_type == "DOUBLE":
        return f"CAST({as_num(t)} AS DOUBLE)"
    if duck_type == "BIGINT":
        n = f"CAST({as_num(t)} AS DOUBLE)"
        return f"(CASE WHEN {n} = floor({n}) AND abs({n}) < 9.2e18 THEN CAST({n} AS BIGINT) END)"
    if duck_type == "TIMESTAMP":
        return t.sql if t.type is ValueType.TIMESTAMP else f"TRY_CAST({as_text(t)} AS TIMESTAMP)"
    if duck_type == "BOOLEAN":
        if t.type is ValueType.BOOLEAN:
            return t.sql
        return (f"(CASE lower({as_text(t)}) WHEN 'true' THEN TRUE WHEN '1' THEN TRUE "
                f"WHEN 'false' THEN FALSE WHEN '0' THEN FALSE END)")
    raise CollectError(f"unsupported table column type {duck_type}")


def _write_library_signals(store: Any, table: Table, query: str, since: float | None, until: float | None,
                           path: Path) -> int:
    """The library_signals table: the query's raw events (``@timestamp``, ``@log``, ``@message``) expanded in
    DuckDB by ``postprocess.expand_library_signals`` (the rule ``collect cloudwatch`` applies to its rows), so no
    message goes through Python and memory holds the per-minute sums, whatever the number of events. Returns the
    row count written."""
    con, compiled = prepare_query(store, query, since, until, limit_cap=None)
    names = [n for n, _ in compiled.columns]
    if names[:3] != ["@timestamp", "@log", "@message"]:
        raise CollectError(f"query for table {table.name!r} returns columns {names}, "
                           "expected @timestamp, @log, @message first")
    ts, log, msg = (Typed(vtype, f"c{i}") for i, (_, vtype) in enumerate(compiled.columns[:3]))
    aliases = ", ".join(f"c{i}" for i in range(len(names)))
    select = f"SELECT {_convert_sql(ts, 'BIGINT')} AS ts, {as_text(log)} AS lg, {as_text(msg)} AS msg"
    rows = f"{select} FROM ({compiled.sql}) AS q({aliases})"
    # the sums do not depend on the order unless a bin's sum is inexact (then ``ordered_source``): no sort
    unordered = (f"{select} FROM ({compiled.unordered_sql}) AS q({aliases}, {', '.join(_ORDER_ALIASES)})"
                 if compiled.unordered_sql is not None else rows)
    params = list(compiled.params)
    ordered_table = "__iw_library_signal_rows"

    def ordered_source() -> tuple[str, list]:
        # rows stored in query order (DuckDB keeps the insertion order of an ordered CREATE TABLE AS): rowid = order
        con.execute(f"CREATE OR REPLACE TEMP TABLE {ordered_table} AS {rows}", params)
        return f"SELECT rowid AS ord, ts, lg, msg FROM {ordered_table}", []

    try:
        expanded, _dropped = expand_library_signals(con, f"SELECT NULL::BIGINT AS ord, ts, lg, msg FROM ({unordered})",
                                                    params, ordered_source)
    finally:
        con.execute(f"DROP TABLE IF EXISTS {ordered_table}")
    n = expanded.num_rows
    by_name = {"time": expanded.column("time").cast(pa.timestamp("ms", tz="UTC")),
               **{c: expanded.column(c) for c in ("log_group", "library", "signal", "events")}}
    schema = arrow_schema(table)
    data = pa.table([by_name[f.name] if f.name in by_name else pa.nulls(n, f.type) for f in schema], schema=schema)
    return write_parquet(split_log_identifier(data), table, path)


def _write_typed(store: Any, table: Table, query: str, since: float | None, until: float | None,
                 write: Callable[[pa.RecordBatchReader], int]) -> tuple[int, dict[str, int]]:
    """Run a standard query and type its result in SQL (no round trip through Python values): the engine's SQL is
    wrapped in a SELECT converting each column to the table's type (columns the query cannot produce null), and
    ``write`` gets it as an Arrow stream of record batches (``_BATCH_ROWS`` rows each, so a table of any size is
    never whole in memory; the query runs once, streamed). Each conversion that can fail adds a flag column
    (value present, converted null), summed per batch and dropped before ``write`` sees the batch. Returns
    (``write``'s row count, {column: values that did not convert})."""
    added = filled_columns(table)
    con, compiled = prepare_query(store, query, since, until, limit_cap=None)
    names = [n for n, _ in compiled.columns]
    if names != [c for c in table.column_names if c not in added]:
        raise CollectError(f"query for table {table.name!r} returns columns {names}, "
                           f"the table has {list(table.column_names)} ({list(added)} filled after the query)")
    aliases = [f"c{i}" for i in range(len(names))]
    converted, flags = {}, []
    duck_types = dict(table.columns)
    for alias, (name, vtype) in zip(aliases, compiled.columns):
        duck = duck_types[name]
        t = Typed(vtype, alias)
        expr = _convert_sql(t, duck)
        converted[name] = f"{expr} AS {quote_ident(name)}"
        if duck != "VARCHAR" and not (duck == "TIMESTAMP" and vtype is ValueType.TIMESTAMP):
            # only these conversions can fail (text and timestamps-as-timestamps cannot)
            flags.append((name, f"({as_text(t)} IS NOT NULL AND ({expr}) IS NULL)"))
    # every table column in the table's order; the ones post-processing fills are typed NULL here
    select = [converted[c] if c in converted else f"CAST(NULL AS {duck}) AS {quote_ident(c)}" for c, duck in table.columns]
    flag_sql = "".join(f", {sql} AS __iw_bad{i}" for i, (_, sql) in enumerate(flags))
    keep = len(table.columns)

    def stream(sources: Iterator[tuple[str, list]], order_aliases: tuple[str, ...]) -> tuple[int, list[int]]:
        """Run the typed SELECT over each ``(sql, params)`` of ``sources`` in turn (sorted by ``order_aliases``
        (key, seq) when given) and hand their rows, concatenated, to ``write``; with ``order_aliases``, raise
        ``_NotInOrder`` as soon as a row arrives out of (key, seq) order."""
        extra = "".join(f", {a}" for a in order_aliases)
        order = f" ORDER BY {order_aliases[0]} ASC NULLS LAST, {order_aliases[1]} ASC" if order_aliases else ""

        def reader(src: str, src_params: list) -> pa.RecordBatchReader:
            return con.sql(f"SELECT {', '.join(select)}{flag_sql}{extra} "
                           f"FROM ({src}) AS q({', '.join(aliases + list(order_aliases))}){order}",
                           params=src_params).to_arrow_reader(_BATCH_ROWS)

        first = reader(*next(sources))
        out_schema = pa.schema(list(first.schema)[:keep])
        bad = [0] * len(flags)
        check = _OrderCheck() if order_aliases else None

        def batches() -> Iterator[pa.RecordBatch]:
            for rd in itertools.chain([first], (reader(*src) for src in sources)):
                try:
                    for batch in rd:
                        if check is not None:
                            check.batch(batch.column(batch.num_columns - 2), batch.column(batch.num_columns - 1))
                        for i in range(len(flags)):
                            bad[i] += pc.sum(batch.column(keep + i).cast(pa.int64())).as_py() or 0
                        yield pa.RecordBatch.from_arrays(batch.columns[:keep], schema=out_schema)
                finally:
                    # the query's result is released now, not when the exception that stopped the stream (which
                    # holds this frame) is gone: the fallback's query needs the connection
                    rd.close()

        ahead = _read_ahead(_rebatch(out_schema, batches()))
        try:
            return write(pa.RecordBatchReader.from_batches(out_schema, ahead)), bad
        finally:
            ahead.close()  # stops and joins the reading thread before the connection runs anything else

    result = None
    if compiled.unordered_sql is not None:
        slices = _time_slices(store, since, until)
        if slices is not None:
            # sorted one time slice at a time (memory: one slice's sort, whatever the table's size); the slices'
            # concatenation is the sorted query's rows in its order when the sort key follows @timestamp, which
            # the order check verifies row by row (else: the one sorted query)
            def sources() -> Iterator[tuple[str, list]]:
                for lo, hi in slices:
                    _, piece = prepare_query(store, query, lo, hi, limit_cap=None)
                    if piece.unordered_sql is None:  # cannot happen (the same query has one): the sorted query
                        raise _NotInOrder
                    yield piece.unordered_sql, piece.params
            try:
                result = stream(sources(), _ORDER_ALIASES)
            except _NotInOrder:
                result = None
    rows, bad = result if result is not None else stream(iter([(compiled.sql, compiled.params)]), ())
    return rows, {name: n for (name, _), n in zip(flags, bad) if n}


_SLICE_EVENTS = 250_000
"""Events per time slice of a sorted row-wise table (``_time_slices``): DuckDB sorts one slice at a time, so the
sort holds at most about this many rows (about 120 MB for ``trail``) instead of the whole table."""


def _time_slices(store: Any, since: float | None, until: float | None
                 ) -> list[tuple[float | None, float | None]] | None:
    """Consecutive ``@timestamp`` ranges ``(since, until)`` in epoch seconds (inclusive, None = unbounded; the
    values ``prepare_query`` takes) that partition the window ``[since, until]`` into pieces of about
    ``_SLICE_EVENTS`` events each (cut at quantiles of ``@timestamp``, so equal times share a slice). None when
    one piece would do, or when an event in the window has no timestamp (a bounded slice would leave it out)."""
    where, params = _window_sql(since, until)
    n, untimed, first = store.connection.execute(
        f'SELECT count(*), count(*) FILTER (WHERE "@timestamp" IS NULL), min("@timestamp") '
        f'FROM {quote_ident(store.table)}{where}', params).fetchall()[0]
    k = -(-n // _SLICE_EVENTS)
    if k < 2 or untimed:
        return None
    cuts = store.connection.execute(
        f'SELECT quantile_disc("@timestamp", [{", ".join(f"{i / k!r}" for i in range(1, k))}]) '
        f'FROM {quote_ident(store.table)}{where}', params).fetchall()[0][0]
    bounds = sorted({int(c) for c in cuts if c > first})  # a slice starts at each; none is empty
    if not bounds:
        return None
    starts = [since, *(_ms_as_seconds(b, upper=False) for b in bounds)]
    ends = [*(_ms_as_seconds(b - 1, upper=True) for b in bounds), until]
    return list(zip(starts, ends))


def _window_sql(since: float | None, until: float | None) -> tuple[str, list[int | None]]:
    """`` WHERE ...`` on ``@timestamp`` (epoch ms) for the window in epoch seconds (inclusive; rounded
    by ``engine.seconds_to_ms``, as ``prepare_query`` rounds it: ``since`` up, ``until`` down to the millisecond), and
    its parameters."""
    where: list[str] = []
    params: list[int | None] = []
    if since is not None:
        where.append('"@timestamp" >= $1')
        params.append(seconds_to_ms(since, upper=False))
    if until is not None:
        where.append(f'"@timestamp" <= ${len(params) + 1}')
        params.append(seconds_to_ms(until, upper=True))
    return (" WHERE " + " AND ".join(where) if where else ""), params


def _ms_as_seconds(ms: int, *, upper: bool) -> float:
    """Epoch seconds that ``prepare_query`` rounds back to exactly ``ms`` (it takes ``ceil(s * 1000)`` as a lower
    bound and ``floor(s * 1000)`` as an upper one): half a millisecond outside, far more than the float error."""
    s = (ms + (0.5 if upper else -0.5)) / 1000.0
    if seconds_to_ms(s, upper=upper) != ms:  # beyond float precision (|ms| > 10^15): not a timestamp the store holds
        raise CollectError(f"timestamp {ms} ms does not round-trip through seconds")
    return s


def _rebatch(schema: pa.Schema, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """``batches`` re-cut to the layout a sorted DuckDB stream has: each ``_DUCKDB_CHUNK_ROWS`` rows, cut into
    batches of at most ``_BATCH_ROWS``. The Parquet writer makes a row group per batch, so a file's bytes do not
    depend on how an unsorted scan happened to cut its stream. A batch that lies within one input batch is a
    zero-copy slice of it; only one that spans input batches is copied into one (``trail`` at 1M events: 0.33 of its
    rows not copied; the time slices' ends fall inside most batches)."""
    pending: list[pa.RecordBatch] = []  # input batches (or their tails) not yet handed on, in order
    held = 0

    def take(rows: int) -> list[pa.RecordBatch]:
        """The first ``rows`` rows of ``pending``, removed from it, as one batch (more only when their strings
        exceed 2 GiB: ``combine_chunks`` then splits the column, and every piece is handed on)."""
        nonlocal held
        parts, need = [], rows
        while need:
            head = pending[0]
            if head.num_rows <= need:
                parts.append(pending.pop(0))
                need -= head.num_rows
            else:
                parts.append(head.slice(0, need))
                pending[0] = head.slice(need)
                need = 0
        held -= rows
        if len(parts) == 1:
            return parts
        return pa.Table.from_batches(parts, schema).combine_chunks().to_batches()

    def cut(rows: int) -> Iterator[pa.RecordBatch]:
        for start in range(0, rows, _BATCH_ROWS):
            yield from take(min(_BATCH_ROWS, rows - start))

    for batch in batches:
        if batch.num_rows:
            pending.append(batch)
            held += batch.num_rows
        while held >= _DUCKDB_CHUNK_ROWS:
            yield from cut(_DUCKDB_CHUNK_ROWS)
    if held:
        yield from cut(held)


_READ_AHEAD = 1
"""Batches ``_read_ahead`` holds ready (memory: this many batches more than a plain stream)."""


def _read_ahead(batches: Iterator[pa.RecordBatch]) -> Generator[pa.RecordBatch, None, None]:
    """``batches``, the same ones in the same order, pulled by a thread up to ``_READ_AHEAD`` ahead of the caller,
    so that DuckDB produces (and sorts) the next batches while the caller writes one (both release the GIL); an
    exception raised by ``batches`` is raised here at its place in the stream. Closing this generator stops the
    thread and waits for it (``batches`` is not advanced after that)."""
    ready: queue.Queue = queue.Queue(_READ_AHEAD)
    stop = threading.Event()
    done = object()

    def put(item: Any) -> bool:
        while not stop.is_set():
            try:
                ready.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def pull() -> None:
        try:
            for batch in batches:
                if not put((batch, None)):
                    return
            put((done, None))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller, raised there
            put((None, exc))

    thread = threading.Thread(target=pull, name="tables-read-ahead", daemon=True)
    thread.start()
    try:
        while True:
            item, exc = ready.get()
            if exc is not None:
                raise exc
            if item is done:
                return
            yield item
    finally:
        stop.set()
        thread.join()


class _NotInOrder(Exception):
    """A row of an unsorted stream arrived out of its query's order."""


class _OrderCheck:
    """Checks that successive batches of (key, seq) are in strictly ascending (key, seq) order with no null key
    (``CompiledQuery.unordered_sql``'s contract); raises ``_NotInOrder`` otherwise."""

    def __init__(self) -> None:
        self.last: tuple[Any, Any] | None = None

    def batch(self, key: pa.Array, seq: pa.Array) -> None:
        n = len(key)
        if n == 0:
            return
        if key.null_count or seq.null_count:
            raise _NotInOrder
        k, q = key.cast(pa.int64()), seq.cast(pa.int64())
        first = (k[0].as_py(), q[0].as_py())
        if self.last is not None and first <= self.last:
            raise _NotInOrder
        if n > 1:
            k0, k1, q0, q1 = k.slice(0, n - 1), k.slice(1), q.slice(0, n - 1), q.slice(1)
            ok = pc.or_(pc.greater(k1, k0), pc.and_(pc.equal(k1, k0), pc.greater(q1, q0)))
            if not pc.all(ok).as_py():
                raise _NotInOrder
        self.last = (k[n - 1].as_py(), q[n - 1].as_py())
