"""EventStore: a DuckDB table of log events with the fields Logs Insights discovers.

Table ``events``: the columns of ``collector.tables.EVENT_COLUMNS`` (``@timestamp`` BIGINT epoch ms, ``@message``,
``@logStream``, ``@log`` (``<account id>:<log group>``, as AWS defines it), ``@ingestionTime`` BIGINT epoch ms,
``@type``, ``@requestId``, the REPORT durations in ms and memory in bytes, ``@seq``, ``@json``), plus the hot
contract fields as columns named like the field (VARCHAR for the contract's string fields, else JSON:
``constants.HOT_STRING_FIELDS``).

The same store serves a one-off in-memory ingest (``EventStore()``) and ``collect local``'s persistent
``events.duckdb`` (``EventStore(path, memory_limit=...)``): an on-disk store spills to ``temp_directory`` instead of
growing past ``memory_limit``; ``transaction()`` makes a file's events and its bookkeeping commit together.

Two transactions per ``transaction()``: the events are appended in the first, and what the ingest must change in
rows it appended (a neighbour's timestamp, the discovered fields of wide or embedded JSON) is only recorded there
(``PENDING_TIMESTAMPS_TABLE``, ``PENDING_FIELDS_TABLE``) and applied by a second one. Why: DuckDB writes a large
append straight into the database file and only its location into the write-ahead log, unless the same transaction
updates or deletes rows it appended; then the COMMIT writes every appended row into the log too (about the size of
the data appended). The record is a redo log: a store opened after a crash between the two
applies it first, so the events are the same as if nothing had happened.

Timestamp rule (sources without a per-event timestamp): the event's own time when it has one (a
``[LEVEL]\\t<ts>`` / ``<ts> <request id>`` prefix in the Lambda text format; in a JSON record EMF
``_aws.Timestamp``, then ``timestamp``, then ``time``), otherwise the time of the previous event of the same
file, otherwise of the next one (``timestamp_from_neighbour_event``), and for a file with no timestamp at
all its modification time (``timestamp_from_file_mtime``). filter-log-events, console CSV and export-to-S3
events use the CloudWatch timestamp they carry.
"""

from __future__ import annotations

import io
import itertools
import json
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, Self

from collector.ingest import console_csv, filter_log_events
from collector.ingest.constants import (
    EVENTS_TABLE,
    HOT_FIELDS,
    HOT_STRING_FIELDS,
    LAMBDA_LOG_GROUP_PREFIX,
    MAX_DECOMPRESSED_BYTES,
    MAX_DISCOVERED_FIELDS,
    MAX_EVENT_BYTES,
    MAX_TIMESTAMP_MS,
    OUT_OF_RANGE_MS,
    PENDING_FIELDS_TABLE,
    PENDING_TIMESTAMPS_TABLE,
    SNIFF_BYTES,
    UNIQUE_VALUE_COLUMNS,
    IngestCheck,
    Reason,
)
from collector.ingest.derive import MACROS, insert_sql
from collector.ingest.exceptions import IngestError, UnknownFormatError
from collector.ingest.fields import count_fields, keep_first_fields
from collector.ingest.line_formats import (
    CONTINUATION_COUNT_SQL,
    FLAGS_TABLE,
    JOIN_SLICE_CHARS,
    RULES,
    LineRule,
    flag_events_src,
    flags_table_sql,
    join_continuations,
    line_events_src,
)
from collector.ingest.lines import DOCUMENT_PIECE_BYTES, TEXT_PIECE_BYTES, byte_pieces, line_table
from collector.ingest.sniff import sniff
from collector.ingest.source import SourceReader, entry_kind, list_log_files
from collector.ingest.timestamps import iso_to_ms
from collector.ingest.types import FileReport, IngestPath, IngestReport, LogFormat
from collector.insights.constants import DEFAULT_ACCOUNT_ID
from collector.insights.engine import table_columns
from collector.insights.log_identifier import check_account_id, log_identifier
from collector.insights.sql import quote_ident as _q
from collector.insights.sql import sql_literal
from collector.tables import (
    EVENT_STORED_COLUMNS,
    INGEST_CHECKS_COLUMN,
    JSON_FIELDS_COLUMN,
    JSON_MESSAGE_COLUMN,
    JSON_VIRTUAL_SQL,
)

_KNOWN_SUFFIXES = (".log", ".jsonl", ".ndjson", ".json", ".txt", ".csv", ".out")
_LINES_VIEW = "_iw_lines"
_LINES_TABLE = "_iw_lines_spilled"
_PIECE_VIEW = "_iw_piece"
FAST_PATH_MIN_BYTES = 4 * 1024 * 1024
"""Plain line files at least this big are split by DuckDB's CSV reader (see ``_ingest_plain_lines``)."""
LINE_READER = f"""read_csv($path, columns = {{'line': 'VARCHAR'}}, delim = chr(1), quote = '', escape = '',
                      comment = '', header = false, auto_detect = false, new_line = '\\n',
                      strict_mode = false, max_line_size = {2 * MAX_EVENT_BYTES})"""
"""DuckDB's parallel reader of the lines of the file ``$path``, one row ``(line VARCHAR)`` each, for a file whose
first bytes ``_plain_line_count`` admits (their lines are its first rows)."""
SESSION_SETTINGS = ("SET TimeZone = 'UTC'",
                    "SET enable_progress_bar = false")  # DuckDB would draw it on stdout on long statements
"""Per-connection DuckDB settings of the store's connection and of every ``cursors()`` connection: a cursor starts
with DuckDB's defaults (the machine's time zone), not its parent's session."""
_JOIN_ROWS = 1 << 18
"""Lines' flags read per query when joining continuation lines (``_join_continuations``)."""
_NUMBERED_CTE = "_iw_numbered"


def default_log_group(path: Path) -> str:
    """``/aws/lambda/<file stem>``: ``orders.log.gz`` -> ``/aws/lambda/orders``."""
    name = path.name
    if name.lower().endswith(".gz"):
        name = name[:-3]
    for suf in _KNOWN_SUFFIXES:
        if name.lower().endswith(suf):
            name = name[: -len(suf)]
            break
    return LAMBDA_LOG_GROUP_PREFIX + name


def _run(con: Any, sql: str, params: Any = None) -> list[tuple]:
    """Execute and read the result to its end (the connection allows one open result at a time)."""
    cur = con.execute(sql, params) if params is not None else con.execute(sql)
    return cur.fetchall()


@contextmanager
def _cleanup(action: Callable[[], object]) -> Iterator[None]:
    """Run ``action`` (a DROP of a temp table, an ``unregister``) when the block ends. After an error, a
    ``TransactionException`` of ``action`` is ignored: a failed statement (DuckDB out of memory...) aborts a DuckDB
    transaction, which then runs no statement until its ROLLBACK (which drops what it created), and raising
    "transaction is aborted" here would replace the error that says what went wrong."""
    import duckdb

    try:
        yield
    except BaseException:
        try:
            action()
        except duckdb.TransactionException:
            pass
        raise
    action()


def _temp_table(con: Any, name: str) -> Any:
    """Context manager that drops the temp table ``name`` when its block ends (``_cleanup``)."""
    return _cleanup(lambda: _run(con, f"DROP TABLE IF EXISTS {name}"))


@contextmanager
def _unordered(con: Any) -> Iterator[None]:
    """Run the block's statements with DuckDB's ``preserve_insertion_order`` off: for the INSERTs of events that
    carry their order in ``@seq``. With it on, DuckDB plans an order-preserving insert, and the parse and derived
    fields of the whole source (most of the ingest) run on one thread; off, on every core. Never around a statement
    whose row order is read (``line_formats.FLAGS_TABLE`` numbers its lines by ``rowid``)."""
    _run(con, "SET preserve_insertion_order = false")
    with _cleanup(lambda: _run(con, "RESET preserve_insertion_order")):
        yield


class EventStore:
    """Log events in a DuckDB table, ready for the offline Logs Insights engine.

    Args:
        path: DuckDB database file; None = in memory.
        hot_fields: JSON keys materialised as extra columns (default: the hot contract keys,
            ``constants.HOT_FIELDS``); ``()`` for none. Typed VARCHAR when in ``constants.HOT_STRING_FIELDS``, else
            JSON; an existing table keeps its columns and their types.
        compress: in-memory store only: keep the table compressed (``ATTACH ':memory:' (COMPRESS)``, made
            the connection's default database, so ``events`` resolves to it). About 1/3 of the memory for
            the table, but ingest takes about twice as long; off by default.
        memory_limit: DuckDB ``memory_limit`` (e.g. ``"1GB"``); None keeps DuckDB's default (80% of RAM). With an
            on-disk ``path`` DuckDB spills to ``temp_directory`` instead of exceeding it.
        temp_directory: where DuckDB spills (default for an on-disk store: ``<path>.tmp``).
        max_decompressed_bytes: decompressed bytes kept per gzip source (``constants.MAX_DECOMPRESSED_BYTES``);
            the rest is not read, counted ``decompressed_size_cap_reached``.
        account_id: the 12-digit account of ``@log`` = ``"<account_id>:<log group>"`` for the events ingested
            through this store (``collector.insights.log_identifier``); ValueError when not 12 digits.

    Attributes:
        connection: the duckdb connection (session time zone UTC).
        memory_limit: the ``memory_limit`` given (None: DuckDB's default).
        table: name of the events table (``"events"``).
        hot_fields: the materialised fields (each also a column of that name).
        hot_types: materialised field -> its column's type, ``"VARCHAR"`` or ``"JSON"``.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *, hot_fields: Iterable[str] = HOT_FIELDS,
                 compress: bool = False, memory_limit: str | None = None,
                 temp_directory: str | os.PathLike[str] | None = None,
                 max_decompressed_bytes: int = MAX_DECOMPRESSED_BYTES,
                 account_id: str = DEFAULT_ACCOUNT_ID) -> None:
        import duckdb

        self.account_id = check_account_id(account_id)
        self.connection = duckdb.connect(str(path) if path is not None else ":memory:")
        self.max_decompressed_bytes = int(max_decompressed_bytes)
        self.memory_limit = memory_limit
        if memory_limit is not None:
            self.connection.execute("SET memory_limit = $1", [str(memory_limit)])
        self._spill_dir: str | None = None
        if temp_directory is not None or path is not None:
            self._spill_dir = str(temp_directory if temp_directory is not None else f"{path}.tmp")
            self.connection.execute("SET temp_directory = $1", [self._spill_dir])
        if path is None and compress:
            # compressed in-memory storage (DuckDB >= 1.3): about 1/3 of the memory, about twice the ingest time
            _run(self.connection, "ATTACH ':memory:' AS iw_events (COMPRESS)")
            _run(self.connection, "USE iw_events")
        self.table = EVENTS_TABLE
        for setting in SESSION_SETTINGS:
            _run(self.connection, setting)
        for macro in MACROS:
            _run(self.connection, macro)
        existing = dict(table_columns(self.connection, self.table)) if self._has_table() else {}
        wanted = {h: "VARCHAR" if h in HOT_STRING_FIELDS else "JSON" for h in hot_fields}
        if existing and JSON_MESSAGE_COLUMN not in existing:
            self._upgrade_layout(list(existing), wanted)
        elif existing:
            for name, kind in EVENT_STORED_COLUMNS:  # a store made before a column: its earlier rows keep NULL
                if name not in existing:
                    _run(self.connection, f"ALTER TABLE {_q(self.table)} ADD COLUMN {_q(name)} {kind}")
            base = {n for n, _ in EVENT_STORED_COLUMNS} | {"@json"}
            self.hot_types = {c: "VARCHAR" if t.upper().startswith("VARCHAR") else "JSON"
                              for c, t in existing.items() if c not in base}
        else:
            self.hot_types = wanted
            self._create_table(self.table)
        self.hot_fields = tuple(self.hot_types)
        self._in_transaction = False
        self._pending = self._create_pending_tables()
        if self._pending:  # a run killed between a transaction's two commits: finish its second one
            self._apply_pending()
        row = _run(self.connection, f'SELECT max("@seq") FROM {_q(self.table)}')[0]
        self._next_seq = 0 if row is None or row[0] is None else int(row[0]) + 1

    # ------------------------------------------------------------------ public API
    def cursors(self, n: int) -> list[Any]:
        """``n`` more connections to this store's database (DuckDB cursors), each set up like ``connection``
        (``SESSION_SETTINGS``), for queries run at the same time from several threads: a DuckDB connection runs one
        query at a time. Make them before the database is hardened (``harden_connection`` locks every setting,
        these sessions' too). The caller closes them."""
        out = []
        for _ in range(n):
            cur = self.connection.cursor()
            for setting in SESSION_SETTINGS:
                _run(cur, setting)
            out.append(cur)
        return out

    def ingest_path(self, path: str | os.PathLike[str], log_group: str | None = None,
                    log_stream: str | None = None) -> IngestReport:
        """Ingest a file (any ``LogFormat``, plain or gzip, sniffed) or every non-hidden file under
        a directory (recursively, sorted by path).

        Args:
            path: file or directory.
            log_group: log group of every event (``@log`` = ``<account_id>:<log_group>``); default
                ``/aws/lambda/<file stem>`` per file.
            log_stream: ``@logStream`` when the source has none; default the file name.

        Returns:
            IngestReport with one FileReport per file.

        Raises:
            IngestError: ``path`` does not exist or a file cannot be read.
            UnknownFormatError: ``path`` is a binary file (in a directory such a file is skipped and
                counted ``not_a_log_file`` instead).
        """
        p = Path(path)
        report = IngestReport()
        if p.is_dir():
            files, entries = list_log_files(p)
            if entries:  # FIFOs, sockets, dangling links... under the directory: counted, not read
                listing = FileReport(source=str(p), format="directory")
                for kind, n in entries.items():
                    listing.count(Reason.SKIPPED_ENTRY_PREFIX + kind, n)
                report.add(listing)
        elif p.is_file():
            files = [p]
        elif p.exists():
            raise IngestError(f"{p}: not a regular file ({entry_kind(p)}); a log file or a directory is needed")
        else:
            raise IngestError(f"no such file or directory: {p}")
        for f in files:
            try:
                report.add(self._ingest_file(f, log_group, log_stream))
            except UnknownFormatError:
                if not p.is_dir():
                    raise
                skipped = FileReport(source=str(f), format="unknown")  # e.g. a Parquet file beside the logs
                skipped.count(Reason.NOT_A_LOG_FILE)
                report.add(skipped)
        return report

    def ingest_events(self, events: Iterable[Mapping[str, Any]], log_group: str,
                      log_stream: str | None = None) -> IngestReport:
        """Ingest filter-log-events event dicts (``timestamp`` epoch ms, ``message``, ``logStreamName``,
        ``ingestionTime``, ``eventId``), in the given order.

        Events without a ``message`` are skipped (``event_without_message``); a missing timestamp takes a
        neighbour's (``timestamp_from_neighbour_event``).
        """
        rep = FileReport(source="<events>", format=LogFormat.FILTER_LOG_EVENTS.value, path=IngestPath.EVENTS)
        self._stage_batches([list(events)], log_group, log_stream or "", rep, int(time.time() * 1000))
        out = IngestReport()
        out.add(rep)
        return out

    def ingest_bytes(self, data: bytes, name: str, log_group: str | None = None, log_stream: str | None = None,
                     *, fmt: LogFormat | None = None, mtime_ms: int | None = None) -> FileReport:
        """Ingest already-read bytes named ``name`` (used for the log group default), gunzipped when they are gzip."""
        src = SourceReader(io.BytesIO(data), max_bytes=self.max_decompressed_bytes)
        rep = FileReport(source=name, format="", compressed=src.compressed)
        self._ingest_source(src, Path(name), log_group, log_stream, rep, fmt=fmt,
                            mtime_ms=mtime_ms if mtime_ms is not None else int(time.time() * 1000))
        return rep

    def ingest_file(self, path: str | os.PathLike[str], log_group: str | None = None,
                    log_stream: str | None = None, *, start: int = 0, end: int | None = None,
                    fmt: LogFormat | None = None) -> FileReport:
        """Ingest bytes ``[start, end)`` of one file (``end`` None: its size when opened), never more: bytes appended
        while it is read are left for a later call. ``start`` > 0 reads the rest of a plain file from there (an
        append; its first line starts an event whatever it is). ``fmt``: read as this format (the one the file's
        start was read as) instead of sniffing. Log group and stream as ``ingest_path``.

        Raises:
            IngestError: the file cannot be read.
            UnknownFormatError: binary content (NUL bytes in its first 64 KiB).
        """
        return self._ingest_file(Path(path), log_group, log_stream, start, end, fmt)

    def count(self) -> int:
        """Number of events in the store."""
        return int(_run(self.connection, f"SELECT count(*) FROM {_q(self.table)}")[0][0])

    @property
    def next_seq(self) -> int:
        """``@seq`` the next ingested event gets (one more than the largest stored, 0 when empty)."""
        return self._next_seq

    def delete_seq_ranges(self, ranges: Iterable[Sequence[int]]) -> int:
        """Delete the events with ``lo <= @seq <= hi`` for each ``(lo, hi)``; returns how many were deleted."""
        removed = 0
        for lo, hi in ranges:
            removed += _run(self.connection, f'DELETE FROM {_q(self.table)} WHERE "@seq" BETWEEN $1 AND $2',
                            [int(lo), int(hi)])[0][0]
        return int(removed)

    @contextmanager
    def transaction(self) -> Iterator[Self]:
        """Everything written inside commits together or not at all (an exception, or the process killed at any
        point, leaves the store as before; ``next_seq`` is restored too). Not re-entrant.

        Committed as two DuckDB transactions (see the module's docstring): the first holds everything written
        inside and the record of the changes the ingest still has to make to rows it appended; the second makes
        them. Killed between the two, the store finishes the second when it is next opened, before anything reads
        it; an error in the second (DuckDB out of memory...) leaves the record for the next open and propagates."""
        seq = self._next_seq
        _run(self.connection, "BEGIN TRANSACTION")
        self._in_transaction = True
        try:
            yield self
        except BaseException:
            _run(self.connection, "ROLLBACK")
            self._next_seq = seq
            self._pending = False  # the rollback took its record too
            raise
        finally:
            self._in_transaction = False
        _run(self.connection, "COMMIT")
        if self._pending:
            self._apply_pending()

    def close(self) -> None:
        self.connection.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ per file
    def _ingest_file(self, path: Path, log_group: str | None, log_stream: str | None, start: int = 0,
                     end: int | None = None, fmt: LogFormat | None = None) -> FileReport:
        try:
            st = path.stat()
            mtime_ms = int(st.st_mtime * 1000)
            end = st.st_size if end is None else end
            with open(path, "rb") as fh:
                src = SourceReader(fh, start, end, self.max_decompressed_bytes)
                rep = FileReport(source=str(path), format="", compressed=src.compressed)
                plain = fh if not src.compressed and start == 0 and end >= FAST_PATH_MIN_BYTES else None
                self._ingest_source(src, path, log_group, log_stream, rep, mtime_ms=mtime_ms, fmt=fmt, plain=plain,
                                    end=end)
        except OSError as exc:
            raise IngestError(f"cannot read {path}: {exc}") from exc
        return rep

    def _ingest_source(self, src: SourceReader, path: Path, log_group: str | None, log_stream: str | None,
                       rep: FileReport, *, mtime_ms: int, fmt: LogFormat | None = None, plain: Any = None,
                       end: int = 0) -> None:
        """Ingest what ``src`` reads, in the format sniffed from its first bytes (or ``fmt``). ``plain``: the open
        plain file of ``src`` when DuckDB's line reader may read it (``_ingest_plain_lines``: bytes ``[0, end)``)."""
        head = src.peek(SNIFF_BYTES + 1)
        if fmt is None:
            _require_text(head, path)
            fmt = sniff(head, path.name)
        rep.format = fmt.value
        group = log_group or default_log_group(path)
        stream = log_stream or path.name
        rule = RULES.get(fmt)
        if rule is not None:
            if plain is None or not self._ingest_plain_lines(plain, path, end, rule, group, stream, rep, mtime_ms):
                self._ingest_line_pieces(src, rule, group, stream, rep, mtime_ms)
        elif fmt is LogFormat.FILTER_LOG_EVENTS:
            rep.path = IngestPath.JSON_STREAM
            self._stage_batches(filter_log_events.iter_events(byte_pieces(src.read, DOCUMENT_PIECE_BYTES), rep),
                                group, stream, rep, mtime_ms)
        elif fmt is LogFormat.CONSOLE_CSV:
            rep.path = IngestPath.CSV_STREAM
            try:
                self._stage_batches(console_csv.iter_rows(byte_pieces(src.read, DOCUMENT_PIECE_BYTES), rep), group,
                                    stream, rep, mtime_ms)
            except ValueError as exc:
                raise IngestError(f"{path}: {exc}") from exc
        else:  # pragma: no cover - every LogFormat is handled above
            raise IngestError(f"{path}: unsupported format {fmt}")
        rep.bytes_read = end if rep.path == IngestPath.DUCKDB_READER else src.bytes_read
        if src.truncated:
            rep.count(Reason.GZIP_TRUNCATED_STREAM)
        if src.capped:
            rep.count(Reason.DECOMPRESSED_CAP)

    def _stage_batches(self, batches: Iterable[list[Any]], group: str, stream: str, rep: FileReport,
                       fallback_ms: int) -> None:
        """Ingest event dicts (``_staged_rows``) batch by batch: each batch is appended to a temporary Parquet file
        (one row group in memory), and ONE INSERT reads it into the events table, as DuckDB's line reader feeds the
        line formats: DuckDB writes such an append into the database file as it goes, while many small appends in
        one transaction (to any table) stay in memory until its COMMIT. The counts and timestamp rules run once over
        the source; an event without a timestamp takes a neighbour's, else ``fallback_ms``."""
        import tempfile

        import pyarrow.parquet as pq

        lo = self._next_seq
        if self._spill_dir is not None:
            os.makedirs(self._spill_dir, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="idemwatch-stage-", dir=self._spill_dir) as tmp:
            staged = Path(tmp) / "events.parquet"
            writer = None
            try:
                for batch in batches:
                    tbl = self._staged_rows(batch, stream, rep)
                    if tbl is None:
                        continue
                    if writer is None:
                        writer = pq.ParquetWriter(staged, tbl.schema, compression="none")
                    writer.write_table(tbl)
            finally:
                if writer is not None:
                    writer.close()
            if writer is not None:
                self._insert_events("(SELECT seq, ts, msg, stream, $lg AS lg, ing FROM read_parquet($staged))",
                                    {"lg": log_identifier(self.account_id, group), "staged": str(staged)}, own_ts=False)
        if self._next_seq > lo:
            self._finish_batch(lo, self._next_seq - 1, rep, fallback_ms)

    def _ingest_plain_lines(self, fh: Any, path: Path, end: int, rule: LineRule, group: str, stream: str,
                            rep: FileReport, mtime_ms: int) -> bool:
        """Bytes ``[0, end)`` of a large plain line file split by DuckDB's parallel CSV reader: no byte of the file
        passes through Python, and the lines are never a table (memory: DuckDB's read buffers, whatever the file's
        size). False (nothing read) unless ``_plain_line_count`` admits the range, checked before DuckDB reads a byte,
        so the reader never fails half-way (inside a ``transaction()`` a failed statement would abort it): valid
        UTF-8, no ``\\r``, no ``\\x01``, no line over the CloudWatch event size, and a last line that ends with
        ``\\n`` (a line still being written is not taken whole by a reader that reads past ``end``).

        The reader reads to the file's end; its lines past the range's (appended meanwhile) are not taken.
        ``row_number() OVER ()`` numbers the lines of a format whose every line starts an event, a streaming window
        that DuckDB runs on one thread together with everything after it in the same pipeline (the JSON parse, the
        derived fields, the table write: most of the ingest); so the lines are numbered into a temp table by a
        statement of their own, and the rest runs on every core. The table holds the lines in DuckDB's buffer pool,
        which spills to ``temp_directory`` past ``memory_limit``. Other formats read the lines unnumbered into
        ``line_formats.FLAGS_TABLE`` (``_frame_lines``)."""
        n_lines = _plain_line_count(fh, end)
        if n_lines is None:
            return False
        rep.path = IngestPath.DUCKDB_READER
        n = int(n_lines)
        if rule.every_line:
            # Numbered in a statement of its own: in the INSERT's statement DuckDB streams the serial row_number()
            # window into the parse and an order-preserving write, and the whole ingest runs on one thread. Once
            # numbered, each event carries its line number in "@seq", so the INSERT need not keep the rows' order
            # and runs on every core (`_insert_events`).
            con = self.connection
            _run(con, f"CREATE OR REPLACE TEMP TABLE {_NUMBERED_CTE} AS (SELECT i, line FROM (SELECT CAST(row_number() "
                      f"OVER () - 1 AS BIGINT) AS i, line FROM {LINE_READER}) WHERE i < {n})", {"path": str(path)})
            with _temp_table(con, _NUMBERED_CTE):
                self._frame_lines(rule, _NUMBERED_CTE, n, False, group, stream, rep, mtime_ms)
            return True
        # the lines in order, unnumbered (the flags table numbers them by rowid: no serial pass)
        self._frame_lines(rule, f"(SELECT 0 AS i, line FROM {LINE_READER} LIMIT {n})", n, False, group, stream, rep,
                          mtime_ms, params={"path": str(path)})
        return True

    def _ingest_line_pieces(self, src: SourceReader, rule: LineRule, group: str, stream: str, rep: FileReport,
                            mtime_ms: int) -> None:
        """The lines of ``src`` split in Python, ``TEXT_PIECE_BYTES`` at a time, zero-copy into Arrow
        (``lines.line_table``): one piece is handed to DuckDB as it is; more are appended to a temporary table
        (DuckDB's buffer pool, spilled past ``memory_limit``), so memory holds one piece whatever the source's size.
        Whether the source is a CRLF file (at least half its lines end ``\\r\\n``, counted
        ``crlf_line_ending_stripped``) is decided over all of it."""
        rep.path = IngestPath.LINE_PIECES
        con = self.connection
        single: Any = None
        spilled = False
        n_lines = n_crlf = 0
        terminated = True
        with ExitStack() as cleanup:
            for piece in byte_pieces(src.read, TEXT_PIECE_BYTES):
                tbl, n, n_cr = line_table(piece, rep, first=n_lines)
                n_lines, n_crlf, terminated = n_lines + n, n_crlf + n_cr, piece.endswith(b"\n")
                if single is None and not spilled:
                    single = tbl
                    continue
                if not spilled:
                    _run(con, f"CREATE OR REPLACE TEMP TABLE {_LINES_TABLE} (i BIGINT, line VARCHAR)")
                    cleanup.enter_context(_temp_table(con, _LINES_TABLE))
                    spilled = True
                for t in (single, tbl):
                    if t is not None:
                        con.register(_PIECE_VIEW, t)
                        with _cleanup(lambda: con.unregister(_PIECE_VIEW)):
                            _run(con, f"INSERT INTO {_LINES_TABLE} SELECT i, line FROM {_PIECE_VIEW}")
                single = None
            if n_lines and not terminated and (src.truncated or src.capped):
                rep.count(Reason.GZIP_TRUNCATED)  # the cut last line, kept as it is
            crlf = n_crlf > 0 and n_crlf * 2 >= n_lines  # a CRLF file; otherwise "\r" is message content
            if crlf:
                rep.count(Reason.CRLF, n_crlf)
            if single is not None:
                con.register(_LINES_VIEW, single)
                cleanup.enter_context(_cleanup(lambda: con.unregister(_LINES_VIEW)))
            self._frame_lines(rule, _LINES_VIEW if single is not None else _LINES_TABLE, n_lines, crlf, group,
                              stream, rep, mtime_ms)

    def _join_continuations(self, path: Path, row_base: int, n_lines: int) -> tuple[list[int], int] | None:
        """Write ``line_formats.JOINED`` rows from ``FLAGS_TABLE`` (``line_formats.join_continuations``; its first row
        has the rowid ``row_base``) to the Parquet file ``path``, one Arrow batch at a time. Returns the slices' bounds
        (line numbers ``[0, b1, ..., n_lines]``: each slice's events hold at most ``JOIN_SLICE_CHARS`` characters of
        continuation lines past its last event's own) and the continuation lines kept; None when there are none."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        con = self.connection
        first = _run(con, f"SELECT min(rowid) FILTER (WHERE NOT bl) FROM {FLAGS_TABLE}")[0][0]
        if first is None:
            return None

        def batches() -> Iterator[Any]:
            for a in range(0, n_lines, _JOIN_ROWS):  # fetched whole, range by range, in rowid order
                yield con.sql(f"SELECT bl, st, CASE WHEN NOT st THEN m END FROM {FLAGS_TABLE} "
                              "WHERE rowid >= $1 AND rowid < $2 ORDER BY rowid",
                              params=[row_base + a, row_base + a + _JOIN_ROWS]).to_arrow_table()

        schema = pa.schema([("owner", pa.int64()), ("rest", pa.large_string()), ("lines", pa.int64())])
        bounds, chars, kept = [0], 0, 0
        with pq.ParquetWriter(path, schema, compression="none") as writer:
            for owners, rests, counts in join_continuations(batches(), int(first - row_base)):
                writer.write_table(pa.table([pa.array(owners, pa.int64()), pa.array(rests, pa.large_string()),
                                             pa.array(counts, pa.int64())], schema=schema))
                kept += sum(counts)
                for owner, rest in zip(owners, rests, strict=True):
                    chars += len(rest) if rest else 0
                    if chars >= JOIN_SLICE_CHARS:  # this event's line ends the slice
                        bounds.append(owner + 1)
                        chars = 0
        bounds = sorted({*bounds, n_lines})
        return bounds, kept

    def _frame_lines(self, rule: LineRule, lines: str, n_lines: int, crlf: bool, group: str, stream: str,
                     rep: FileReport, mtime_ms: int, *, params: dict[str, Any] | None = None) -> None:
        """INSERT the events of the line relation ``lines`` ``(i, line)`` (``n_lines`` rows, ``i`` from 0) by the
        format's ``rule`` (``line_formats``). For a format whose lines may continue an event, the lines and their
        flags are stored once (``FLAGS_TABLE``; ``lines`` need only be in order there, its ``i`` is not read), the
        events with continuation lines are found only when the source has a line that
        starts none, and the events are inserted from there, a slice at a time when they are joined
        (``line_formats.JOIN_SLICE_CHARS``). ``params``: named parameters of ``lines``."""
        if not n_lines:
            return
        params = dict(params or {})
        lo = self._next_seq
        values = {"stream": stream, "lg": log_identifier(self.account_id, group)}
        if rule.every_line:
            self._insert_events(line_events_src(rule, lines, crlf, lo), {**params, **values}, own_ts=rule.own_ts)
            kept = 0
        else:
            kept = self._frame_flagged(rule, lines, n_lines, crlf, lo, params, values)
        self._next_seq = lo + n_lines
        inserted = self._finish_batch(lo, lo + n_lines - 1, rep, mtime_ms, no_ts_reason=rule.no_ts_reason)
        rep.count(Reason.MULTILINE_JOINED, kept)
        rep.count(Reason.BLANK_LINE, n_lines - inserted - kept)

    def _frame_flagged(self, rule: LineRule, lines: str, n_lines: int, crlf: bool, lo: int, params: dict[str, Any],
                       values: dict[str, Any]) -> int:
        """``_frame_lines`` of a rule whose lines may continue an event; returns the continuation lines kept."""
        import tempfile

        con = self.connection
        if self._spill_dir is not None:
            os.makedirs(self._spill_dir, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="idemwatch-join-", dir=self._spill_dir) as tmp:
            joined_path = Path(tmp) / "joined.parquet"
            _run(con, flags_table_sql(rule, lines, crlf), params or None)
            with _temp_table(con, FLAGS_TABLE):
                # rowids count the rows in insertion order from the table's first one, which is 0 once committed but
                # not inside a transaction (DuckDB numbers uncommitted rows from a high base)
                row_base = int(_run(con, f"SELECT min(rowid) FROM {FLAGS_TABLE}")[0][0])
                found = (self._join_continuations(joined_path, row_base, n_lines)
                         if _run(con, CONTINUATION_COUNT_SQL)[0][0] else None)
                if found is None:
                    self._insert_events(flag_events_src(lo, row_base, joined=False), values, own_ts=rule.own_ts)
                    return 0
                bounds, kept = found
                for a, b in itertools.pairwise(bounds):
                    self._insert_events(flag_events_src(lo, row_base, joined=True, lines=(a, b)),
                                        {**values, "joined": str(joined_path)}, own_ts=rule.own_ts)
                return kept

    def _insert_events(self, src: str, params: dict[str, Any], *, own_ts: bool) -> None:
        """INSERT the staged relation ``src`` (``derive.insert_sql``; ``params``: its named parameters) into the events
        table, without keeping row order (``_unordered``): every format's events go in through here."""
        with _unordered(self.connection):
            _run(self.connection, insert_sql(self.table, src, self.hot_types, own_ts=own_ts), params)

    def _staged_rows(self, events: Iterable[Any], stream: str, rep: FileReport) -> Any:
        """Arrow table ``(seq, ts, msg, stream, ing)`` of event dicts (``message``, ``timestamp``, ``logStreamName``,
        ``ingestionTime``), numbered from ``next_seq`` on (which it advances); None when none has a message. Events
        without a message are counted ``event_without_message``, blank ones ``blank_line``."""
        tss: list[int | None] = []
        msgs: list[str] = []
        streams: list[str | None] = []
        ings: list[int | None] = []
        for ev in events:
            if not isinstance(ev, Mapping):
                rep.count(Reason.EVENT_WITHOUT_MESSAGE)
                continue
            msg = ev.get("message")
            if msg is None or (isinstance(msg, str) and (not msg or msg.isspace())):
                rep.count(Reason.EVENT_WITHOUT_MESSAGE if msg is None else Reason.BLANK_LINE)
                continue
            if not isinstance(msg, str):
                msg = json.dumps(msg) if isinstance(msg, (dict, list)) else str(msg)
            tss.append(_as_ms(ev.get("timestamp"), rep))
            msgs.append(msg)
            streams.append(ev.get("logStreamName") or stream)
            ings.append(_as_ms(ev.get("ingestionTime"), rep))
        if not msgs:
            return None
        import numpy as np
        import pyarrow as pa  # here, not at the top: see lines.py

        lo = self._next_seq
        self._next_seq = lo + len(msgs)
        seqs = pa.Array.from_buffers(pa.int64(), len(msgs),
                                     [None, pa.py_buffer(np.arange(lo, lo + len(msgs), dtype=np.int64))])
        return pa.table({"seq": seqs, "ts": pa.array(tss, pa.int64()), "msg": pa.array(msgs, pa.large_string()),
                         "stream": pa.array(streams, pa.large_string()), "ing": pa.array(ings, pa.int64())})

    def _finish_batch(self, lo: int, hi: int, rep: FileReport, fallback_ts: int,
                      no_ts_reason: str | None = None) -> int:
        """Count the rows ``lo <= @seq <= hi`` and record (``_apply_pending``: at once outside a ``transaction()``, else
        by its second commit) their missing timestamps' rule and their discovered fields when capped or embedded;
        returns the row count.

        ``no_ts_reason``: the reason to count rows without a timestamp under (None: the neighbour rule's own;
        ``""``: already counted by the caller)."""
        con, t = self.connection, _q(self.table)
        total, no_ts, out_of_range, bad_json, wide, embedded, cut = _run(con,
            f"""SELECT count(*),
                   count(*) FILTER (WHERE "@timestamp" IS NULL),
                   count(*) FILTER (WHERE "@timestamp" = {OUT_OF_RANGE_MS}),
                   count(*) FILTER (WHERE {_checked(IngestCheck.INVALID_JSON)}),
                   count(*) FILTER (WHERE {_checked(IngestCheck.WIDE_JSON)}),
                   count(*) FILTER (WHERE {_checked(IngestCheck.EMBEDDED_JSON)}),
                   count(*) FILTER (WHERE {_checked(IngestCheck.TRUNCATED)})
               FROM {t} WHERE "@seq" BETWEEN $1 AND $2""", [lo, hi])[0]
        rep.events += int(total)
        rep.count(Reason.TRUNCATED_OVER_1MB, int(cut))
        rep.count(Reason.INVALID_JSON, int(bad_json))
        if out_of_range:  # a record time beyond +-MAX_TIMESTAMP_MS: replaced by a neighbour's like a missing one
            rep.count(Reason.TIMESTAMP_OUT_OF_RANGE, int(out_of_range))
            no_ts += out_of_range
        if no_ts:
            if no_ts_reason:
                rep.count(no_ts_reason, int(no_ts))
            if no_ts == total:  # no timestamp anywhere in the source
                rep.count(Reason.TIMESTAMP_FROM_FILE, int(no_ts))
            elif no_ts_reason is None:
                rep.count(Reason.TIMESTAMP_INFERRED, int(no_ts))
            _run(con, f"INSERT INTO {_q(PENDING_TIMESTAMPS_TABLE)} VALUES ($1, $2, $3)", [lo, hi, int(fallback_ts)])
            self._pending = True
        if wide:
            self._cap_fields(lo, hi, rep)
        if embedded:
            self._embedded_json(lo, hi, rep)
        if self._pending and not self._in_transaction:
            self._apply_pending()
        return int(total)

    def _create_pending_tables(self) -> bool:
        """Create the redo record's tables when missing; True when the record holds something."""
        con = self.connection
        _run(con, f"CREATE TABLE IF NOT EXISTS {_q(PENDING_TIMESTAMPS_TABLE)} "
                  "(lo BIGINT NOT NULL, hi BIGINT NOT NULL, fallback_ms BIGINT NOT NULL)")
        _run(con, f"CREATE TABLE IF NOT EXISTS {_q(PENDING_FIELDS_TABLE)} (seq BIGINT NOT NULL, fields VARCHAR NOT NULL)")
        return bool(_run(con, f"SELECT (SELECT count(*) FROM {_q(PENDING_TIMESTAMPS_TABLE)}) "
                              f"+ (SELECT count(*) FROM {_q(PENDING_FIELDS_TABLE)})")[0][0])

    def _apply_pending(self) -> None:
        """Make the recorded changes in one transaction and clear the record (idempotent: the record goes with the
        changes it describes).

        Timestamps, for each recorded batch ``lo <= @seq <= hi``: an event without one (NULL, or the
        ``OUT_OF_RANGE_MS`` mark) takes the previous timestamped event's (ASOF join: cost ~ rows without a
        timestamp), else the batch's first timestamped event's, else ``fallback_ms`` (no timestamp in the batch).
        Fields: ``@jsonFields`` and the hot columns of each recorded ``@seq``, re-read from the recorded text."""
        con, t = self.connection, _q(self.table)
        pts, pf = _q(PENDING_TIMESTAMPS_TABLE), _q(PENDING_FIELDS_TABLE)
        valid = f'"@timestamp" IS NOT NULL AND "@timestamp" <> {OUT_OF_RANGE_MS}'
        _run(con, "BEGIN TRANSACTION")
        try:
            for lo, hi, fallback in _run(con, f"SELECT lo, hi, fallback_ms FROM {pts} ORDER BY lo"):
                _run(con, f"""UPDATE {t} SET "@timestamp" = f.fts FROM (
                        SELECT n.s, COALESCE(p.ts, (SELECT "@timestamp" FROM {t} WHERE "@seq" BETWEEN $1 AND $2
                                AND {valid} ORDER BY "@seq" LIMIT 1), $3) AS fts
                        FROM (SELECT "@seq" AS s FROM {t} WHERE "@seq" BETWEEN $1 AND $2 AND NOT ({valid})) AS n
                        ASOF LEFT JOIN (SELECT "@seq" AS s, "@timestamp" AS ts FROM {t}
                                        WHERE "@seq" BETWEEN $1 AND $2 AND {valid}) AS p
                            ON n.s >= p.s) AS f
                    WHERE {t}."@seq" = f.s""", [lo, hi, fallback])
            sets = [f"{_q(JSON_FIELDS_COLUMN)} = CAST(CAST(c.fields AS JSON) AS VARCHAR)"] + [
                f"{_q(h)} = {_hot_value(h, kind, 'CAST(c.fields AS JSON)')}" for h, kind in self.hot_types.items()]
            _run(con, f'UPDATE {t} SET {", ".join(sets)} FROM {pf} AS c WHERE {t}."@seq" = c.seq')
            _run(con, f"DELETE FROM {pts}")
            _run(con, f"DELETE FROM {pf}")
        except BaseException:
            _run(con, "ROLLBACK")
            raise
        _run(con, "COMMIT")
        self._pending = False

    def _embedded_json(self, lo: int, hi: int, rep: FileReport) -> None:
        """Fields of the first embedded JSON fragment of messages that are not one JSON object.

        AWS ("Supported logs and discovered fields"): for Lambda logs, Logs Insights discovers fields "only for the
        first embedded JSON fragment in each log event". The fragment is the first JSON object starting at one of
        the message's first ``_FRAGMENT_TRIES`` ``{`` characters; its fields become ``@json`` (and the hot columns),
        the message stays as it was. Counted ``fields_from_embedded_json_fragment``."""
        con, t = self.connection, _q(self.table)
        rows = _run(con, f"""SELECT "@seq", "@message" FROM {t} WHERE "@seq" BETWEEN $1 AND $2
                             AND {_checked(IngestCheck.EMBEDDED_JSON)}""", [lo, hi])
        decoder = json.JSONDecoder()
        updates = []
        for seq, msg in rows:
            at = msg.find("{")
            for _ in range(_FRAGMENT_TRIES):
                if at < 0:
                    break
                try:
                    doc, _end = decoder.raw_decode(msg, at)
                    if isinstance(doc, dict):
                        wide = count_fields(doc) > MAX_DISCOVERED_FIELDS
                        fields = json.dumps(keep_first_fields(doc)[0] if wide else doc, ensure_ascii=False)
                        fields.encode("utf-8")  # an escaped lone surrogate ("\ud800") has no UTF-8 form
                except (ValueError, RecursionError):  # not JSON at this "{" (for DuckDB too), or nested too deep
                    at = msg.find("{", at + 1)
                    continue
                if isinstance(doc, dict):
                    if wide:
                        rep.count(Reason.JSON_FIELDS_OVER_200)
                    updates.append((fields, seq))
                break
        rep.count(Reason.EMBEDDED_JSON, len(updates))
        self._set_json(updates)

    def _cap_fields(self, lo: int, hi: int, rep: FileReport) -> None:
        con, t = self.connection, _q(self.table)
        rows = _run(con, f'SELECT "@seq", "@message" FROM {t} WHERE "@seq" BETWEEN $1 AND $2 AND '
                         + _checked(IngestCheck.WIDE_JSON), [lo, hi])
        updates = []
        for seq, msg in rows:
            try:
                doc = json.loads(msg)
                if not isinstance(doc, dict) or count_fields(doc) <= MAX_DISCOVERED_FIELDS:
                    continue
                kept, _ = keep_first_fields(doc)
            except (ValueError, RecursionError):  # RecursionError: nested deeper than Python reads; kept whole
                continue
            updates.append((json.dumps(kept, ensure_ascii=False), seq))
        rep.count(Reason.JSON_FIELDS_OVER_200, len(updates))
        self._set_json(updates)

    def _set_json(self, updates: list[tuple[str, int]]) -> None:
        """Record the discovered fields (``@jsonFields``, so ``@json``, and the hot columns, re-read from it) of rows
        ``@seq`` as the given JSON object texts; ``_apply_pending`` sets them. ``updates``: ``[(json text, @seq), ...]``."""
        if not updates:
            return
        import pyarrow as pa  # here, not at the top: see lines.py

        con = self.connection
        fix = pa.table({"seq": pa.array([q for _, q in updates], pa.int64()),
                        "j": pa.array([j for j, _ in updates], pa.large_string())})
        con.register("_iw_cap", fix)
        try:
            _run(con, f"INSERT INTO {_q(PENDING_FIELDS_TABLE)} SELECT seq, j FROM _iw_cap")
        finally:
            con.unregister("_iw_cap")
        self._pending = True

    def _create_table(self, name: str) -> None:
        """The events table. ``@message`` is stored with ZSTD: DuckDB's default string compression (DICT_FSST since
        1.3) spends about as much CPU choosing and building its dictionary as the rest of the ingest's table write,
        for a file 2x larger than ZSTD's; scans cost about the same. A DuckDB without ZSTD for strings (< 1.2) gets
        its default. The nearly-unique text columns (``constants.UNIQUE_VALUE_COLUMNS``) are stored uncompressed."""
        import duckdb

        zstd = tuple(int(p) for p in duckdb.__version__.split(".")[:2] if p.isdigit()) >= (1, 2)

        def storage(column: str) -> str:
            if column == "@message":
                return " USING COMPRESSION zstd" if zstd else ""
            return " USING COMPRESSION uncompressed" if column in UNIQUE_VALUE_COLUMNS else ""

        cols = [f"{_q(n)} {t}{storage(n)}" for n, t in EVENT_STORED_COLUMNS] + [
            f"{_q(h)} {kind}{storage(h)}" for h, kind in self.hot_types.items()]
        cols.append(f'"@json" VARCHAR GENERATED ALWAYS AS ({JSON_VIRTUAL_SQL}) VIRTUAL')  # not JSON: see the constant
        _run(self.connection, f"CREATE TABLE {_q(name)} (" + ", ".join(cols) + ")")

    def _upgrade_layout(self, existing: list[str], hot_types: dict[str, str]) -> None:
        """Rewrite an events table of the earlier layout (a stored ``@json`` copy of each JSON message) into the
        current one, keeping every event, its ``@seq`` and its fields; hot fields it lacks are read from its
        ``@json``. Committed in one transaction."""
        self.hot_types = hot_types
        t, old = _q(self.table), _q(self.table + "_layout1")
        keep = [n for n, _ in EVENT_STORED_COLUMNS if n in existing]
        hot = [_hot_value(h, kind, '"@json"') for h, kind in hot_types.items()]
        targets = ", ".join(_q(c) for c in [*keep, JSON_MESSAGE_COLUMN, JSON_FIELDS_COLUMN, *hot_types])
        _run(self.connection, "BEGIN TRANSACTION")
        _run(self.connection, f"ALTER TABLE {t} RENAME TO {old}")
        self._create_table(self.table)
        _run(self.connection, f"""INSERT INTO {t} ({targets})
            SELECT {", ".join(_q(c) for c in keep)},
                TRY_CAST("@message" AS JSON) IS NOT NULL,
                CASE WHEN CAST("@json" AS VARCHAR) <> "@message" THEN CAST("@json" AS VARCHAR) END
                {"".join(", " + h for h in hot)}
            FROM {old}""")
        _run(self.connection, f"DROP TABLE {old}")
        _run(self.connection, "COMMIT")

    def _has_table(self) -> bool:
        return bool(_run(self.connection, "SELECT count(*) FROM duckdb_tables() WHERE table_name = $1",
                         [self.table])[0][0])


_SCAN_BYTES = 2 * 1024 * 1024
"""Bytes per block of ``_plain_line_count``. Its scans (``in`` twice, the newline mask, ``isascii``) each read the
block again, so a block that stays in the CPU's cache makes every scan after the first a cache hit (a block of tens of
MiB does not)."""


def _checked(bit: int) -> str:
    """SQL: the row's ``@ingestChecks`` has the ``IngestCheck`` bit ``bit``."""
    return f"({_q(INGEST_CHECKS_COLUMN)} & {int(bit)}) <> 0"


_FRAGMENT_TRIES = 8  # "{" positions tried per message for an embedded JSON object (bounds hostile input)


def _plain_line_count(fh: Any, end: int | None = None) -> int | None:
    """The number of lines of the first ``end`` bytes (None: all) of the binary file ``fh`` when DuckDB's line reader
    gives exactly those lines first, else None: valid UTF-8, no ``\\r`` (it breaks lines there too), no ``\\x01``
    (its column delimiter here), no line over the CloudWatch event size (``MAX_EVENT_BYTES``: DuckDB's reader fails past its
    ``max_line_size``; the event is cut in SQL anyway) and a last line
    that ends with ``\\n`` (the reader would read on into what is appended). The count is the ``\\n`` bytes. One
    pass, read into one reused buffer (memory: that
    buffer and a reused newline mask of its size, ``_SCAN_BYTES`` each; read, not mapped, so the file's pages do not
    count in the process's resident memory).

    Per block, only C-speed scans: ``in`` for the two bytes, numpy for the newlines (it counts without the GIL, so
    the source's SHA-256, hashed on a thread meanwhile, takes no wall time of its own); a line-length walk that
    jumps from newline to newline at most ``MAX_EVENT_BYTES + 1`` bytes ahead with ``rfind`` (a few steps per MiB,
    exact: a gap longer than that between two newlines, or from the file's start, has no newline in the window; the
    tail after the last newline is checked at the end); UTF-8 by an incremental decoder, skipped for an all-ASCII
    block when no multi-byte sequence is pending (ASCII is valid UTF-8 and cannot complete one)."""
    import codecs

    import numpy  # a dependency of pandas and so of the collector; already loaded by pyarrow or DuckDB

    fh.seek(0)
    limit = MAX_EVENT_BYTES + 1  # the largest distance between two consecutive newlines (a line and its "\n")
    decoder = codecs.getincrementaldecoder("utf-8")()
    buf = bytearray(_SCAN_BYTES)
    newline_mask = numpy.empty(_SCAN_BYTES, dtype=bool)  # reused: a fresh array per block costs page faults
    base = 0  # file offset of the block
    last_nl = -1  # file offset of the last newline seen (-1: before the file's start)
    newlines = 0
    left = end
    while n := fh.readinto(buf if left is None or left >= len(buf) else memoryview(buf)[:left]):
        if left is not None:
            left -= n
        block = buf if n == len(buf) else buf[:n]  # a copy only for a short (the last) block
        if b"\r" in block or b"\x01" in block:
            return None
        while base + n - 1 - last_nl > limit:  # the block's end is too far from the last newline: one must be nearer
            at = block.rfind(b"\n", max(last_nl + 1 - base, 0), last_nl + limit + 1 - base)
            if at < 0:
                return None
            last_nl = base + at
        at = block.rfind(b"\n", max(last_nl + 1 - base, 0))  # safe: nothing after last_nl is too far from it
        if at >= 0:
            last_nl = base + at
        mask = newline_mask[:n]
        numpy.equal(numpy.frombuffer(block, dtype=numpy.uint8), 10, out=mask)  # without the GIL
        newlines += int(numpy.count_nonzero(mask))
        if decoder.getstate()[0] or not block.isascii():
            try:
                decoder.decode(block)
            except UnicodeDecodeError:
                return None
        base += n
    if base - 1 != last_nl:  # an unterminated last line (or an empty range)
        return None
    try:
        decoder.decode(b"", final=True)  # a multi-byte sequence cut by the end of the file
    except UnicodeDecodeError:
        return None
    return newlines


def _hot_value(field: str, kind: str, json_sql: str) -> str:
    """SQL of hot field ``field``'s value in the JSON object ``json_sql``, for a column of type ``kind``: the JSON value
    (``"JSON"``), or the string, or a non-string value's JSON text (``"VARCHAR"``), as ``derive.insert_sql`` reads it."""
    fn = "json_extract_string" if kind == "VARCHAR" else "json_extract"
    return f"{fn}({json_sql}, {sql_literal('$.' + field)})"


def _require_text(head: bytes, path: Path) -> None:
    """Log files are text: NUL bytes in the first 64 KiB mean a binary file (Parquet, an image...)."""
    if b"\x00" in head:
        raise UnknownFormatError(f"{path}: binary content (NUL bytes), not a log file in a supported format")


def _as_ms(value: Any, rep: FileReport | None = None) -> int | None:
    """Epoch ms of a timestamp value (a number, digits, or ISO-8601 text); None when absent or not a time. A number
    beyond +-``MAX_TIMESTAMP_MS`` (or inf/nan) is None too, counted ``timestamp_out_of_range_replaced`` in ``rep``."""
    if type(value) is int and -MAX_TIMESTAMP_MS <= value <= MAX_TIMESTAMP_MS:  # the usual epoch ms, first
        return value
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str):
        v = value.strip()
        if v.lstrip("-").isdigit():
            num: float | int = int(v)
        else:
            try:
                num = float(v)
            except ValueError:
                return iso_to_ms(v)
    elif isinstance(value, (int, float)):
        num = value
    else:
        return None
    if not abs(num) <= MAX_TIMESTAMP_MS:  # nan (every comparison false), inf, 1e300, 99999999999999999999999
        if rep is not None:
            rep.count(Reason.TIMESTAMP_OUT_OF_RANGE)
        return None
    return int(num)
