"""collect_local: ingest local log files into ``out/events.duckdb`` and write the standard tables and the manifest.

Layout written under ``out``::

    out/tables/<name>.parquet   one per table in collector/tables.py, exactly its columns/types
    out/manifest.json           sources, time window, query hashes, row counts, skipped lines
    out/events.duckdb           the collected events and, in table ``iw_sources``, what each source contributed
    out/.collect.lock           held while a run writes (``run_lock``)

Incremental collection ("collecting again only adds new data"): every source file is fingerprinted (size +
SHA-256). On a later run a file with the same fingerprint is skipped; a line-oriented file (``fingerprint.appendable``)
that grew by appending (its old bytes unchanged) has only the appended bytes ingested; any other change replaces the
events that file contributed before (tracked by their ``@seq`` ranges). A file is read up to the size recorded for
it, so lines appended while it is read are left for the next run; a last line cut by a writer mid-write is read as
the source's tail, which the next run reads again whole (``_ingest_range``). The manifest records per source the
format it was read as, the bytes read, its events and how it was read (``ingest_path``).

Crash safety: each source's events and its ``iw_sources`` row are committed in one DuckDB transaction, so a run
killed at any point (SIGKILL included) leaves every source either fully collected and recorded or untouched; the
tables and the manifest are then recomputed from the database on every run, so the re-run writes exactly the
tables of a clean run. Runs on one ``out`` are serialized by ``run_lock``.

Memory: DuckDB is held to ``memory_limit`` (default ``DEFAULT_MEMORY_LIMIT``, knob ``memory_limit=`` /
``--memory-limit`` / ``IDEMWATCH_MEMORY_LIMIT``) during the ingest and to ``TABLES_MEMORY_FRACTION`` of it while the
tables are written, and spills to ``out/events.duckdb.tmp``; see docs/collector-guarantees.md for what else a run
holds in memory.
"""

from __future__ import annotations

import json
import os
import threading
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from collector.exceptions import CollectError, OutOfMemoryError
from collector.fingerprint import appendable, sha256_file
from collector.ingest import EventStore, UnknownFormatError
from collector.ingest.constants import MAX_DECOMPRESSED_BYTES, Reason
from collector.ingest.source import entry_kind, list_log_files
from collector.ingest.types import FileReport, IngestReport, LogFormat
from collector.insights.constants import DEFAULT_ACCOUNT_ID
from collector.insights.sql import harden_connection
from collector.run_lock import run_lock
from collector.standard_queries import load_standard_queries

if TYPE_CHECKING:  # imported in collect_local: see _import_ahead
    from collector.local_tables import Progress

__all__ = ["DEFAULT_MEMORY_LIMIT", "EVENTS_DB", "MANIFEST_VERSION", "CollectError", "collect_local"]

MANIFEST_VERSION = 1
EVENTS_DB = "events.duckdb"
SOURCES_TABLE = "iw_sources"
DEFAULT_MEMORY_LIMIT = "512MB"
"""DuckDB memory limit of ``collect local`` (``IDEMWATCH_MEMORY_LIMIT`` overrides it; DuckDB size syntax). The process
peaks at about this plus a few hundred MB (interpreter and libraries, one text piece), whatever the input's size: see
docs/collector-guarantees.md#memory."""
TABLES_MEMORY_FRACTION = 0.5
"""Share of the memory limit DuckDB keeps while the standard tables are written. Their Arrow batches, Parquet writers
and DuckDB's batches handed to Arrow (about 250 MB together) live outside DuckDB's pool, the ingest holds nothing of
the kind, so with half the pool both phases peak at about the same. The tables lose little: each sort is one time
slice (``local_tables._SLICE_EVENTS``) and the cached table blocks DuckDB evicts are re-read from the file."""
BLOCK_ALLOCATOR_FRACTION = 0.5
"""Share of the memory limit DuckDB's block allocator keeps once touched (``block_allocator_memory``). Without it freed
buffer blocks go back to the kernel, and zeroing fresh pages for the next ones is a visible share of the ingest's CPU
(perf); the blocks kept are the pool's, within the limit."""


def _iso(dt: datetime) -> str:
    return dt.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _iter_files(paths: Sequence[Path]) -> tuple[list[tuple[Path, bool]], dict[str, int]]:
    """Files to collect as ``(path, named)`` (``named`` is False for files found inside a directory), without
    duplicates, and ``{entry kind: count}`` of directory entries that are not regular files.

    Raises:
        CollectError: a path does not exist, or a path named on its own is not a regular file (a FIFO...).
    """
    files: list[tuple[Path, bool]] = []
    skipped: dict[str, int] = defaultdict(int)
    for p in map(Path, paths):
        if p.is_dir():
            found, kinds = list_log_files(p)
            files.extend((f, False) for f in found)
            for k, n in kinds.items():
                skipped[k] += n
        elif p.is_file():
            files.append((p, True))
        elif p.exists() or p.is_symlink():
            raise CollectError(f"{p}: not a regular file ({entry_kind(p)}); name a log file or a directory")
        else:
            raise CollectError(f"no such file or directory: {p}")
    seen: set[str] = set()
    out: list[tuple[Path, bool]] = []
    for f, named in files:
        key = str(f.resolve())
        if key not in seen:
            seen.add(key)
            out.append((f, named))
    return out, dict(skipped)


def _report_json(report: IngestReport) -> dict[str, Any]:
    return {"events": report.events, "skipped": report.skipped, "repaired": report.repaired,
            "by_reason": dict(report.by_reason)}


def _merge_reports(a: Mapping[str, Any], b: Mapping[str, Any], sign: int = 1) -> dict[str, Any]:
    """The counts of ``a`` plus (``sign`` -1: minus) those of ``b``."""
    by: dict[str, int] = defaultdict(int)
    for r, k_sign in ((a, 1), (b, sign)):
        for k, v in (r.get("by_reason") or {}).items():
            by[k] += k_sign * v
    return {"events": a["events"] + sign * b["events"], "skipped": a["skipped"] + sign * b["skipped"],
            "repaired": a["repaired"] + sign * b["repaired"], "by_reason": {k: v for k, v in by.items() if v}}


class _SourcesState:
    """What each source contributed (fingerprint, ``@seq`` ranges, ingest counts), kept in the events database
    so it commits in the same transaction as the events themselves."""

    def __init__(self, store: EventStore, manifest_sources: Sequence[Mapping[str, Any]]) -> None:
        self.con = store.connection
        self.con.execute(f"CREATE TABLE IF NOT EXISTS {SOURCES_TABLE} (path VARCHAR PRIMARY KEY, entry VARCHAR)")
        rows = self.con.execute(f"SELECT path, entry FROM {SOURCES_TABLE}").fetchall()
        self.sources: dict[str, dict[str, Any]] = {p: json.loads(e) for p, e in rows}
        if not self.sources and manifest_sources and store.count():
            # events.duckdb written before the state moved into it: take the manifest's record once
            for s in manifest_sources:
                self.put(dict(s))

    def put(self, entry: dict[str, Any]) -> None:
        self.con.execute(f"INSERT OR REPLACE INTO {SOURCES_TABLE} VALUES ($1, $2)",
                         [entry["path"], json.dumps(entry, sort_keys=True)])
        self.sources[entry["path"]] = entry


def _ingest_range(store: EventStore, path: Path, start: int, end: int, fmt: str | None, *, named: bool,
                  appendable_file: bool) -> tuple[IngestReport, dict[str, Any] | None]:
    """Ingest bytes ``[start, end)`` of ``path`` into ``store`` (inside the caller's transaction), never more: bytes
    appended meanwhile are left for the next run. ``fmt``: the format the source was first read as (an append is
    framed by the same rule), None to sniff it.

    A growing file may end, at ``end``, inside a line still being written. Then (for an appendable file) the range
    is read in two parts, the complete lines and that last line, and the second is returned as the tail
    ``{"offset", "seq_range", "ingest"}``: the next run deletes its events and counts and reads again from its
    offset, so the line, whole by then, is read once.

    Raises:
        CollectError: ``path`` was named explicitly and is not a log file (binary content). Found inside a
            directory, such a file (a ``.parquet``, an image...) is counted ``not_a_log_file`` instead.
    """
    report = IngestReport()
    tail: dict[str, Any] | None = None
    try:
        cut = _last_line_start(path, start, end) if appendable_file else end
        parts = [(a, b) for a, b in ((start, cut), (cut, end)) if a < b]
        for a, b in parts:
            lo = store.next_seq
            rep = store.ingest_file(path, start=a, end=b, fmt=LogFormat(fmt) if fmt else None)
            fmt = fmt or rep.format
            report.add(rep)
            if a == cut:  # the last line, without its "\n" yet
                tail = {"offset": a, "seq_range": [lo, store.next_seq - 1] if store.next_seq > lo else None,
                        "ingest": _report_json(_single(rep))}
    except UnknownFormatError as exc:
        if named:
            raise CollectError(str(exc)) from None
        skipped = FileReport(source=str(path), format="unknown")
        skipped.count(Reason.NOT_A_LOG_FILE)
        report = IngestReport()
        report.add(skipped)
    return report, tail


def _single(rep: FileReport) -> IngestReport:
    out = IngestReport()
    out.add(rep)
    return out


def _last_line_start(path: Path, start: int, end: int) -> int:
    """The offset just after the last ``\\n`` in ``[start, end)`` of ``path`` (``end`` when the range ends with one,
    ``start`` when it has none): where a line still being written starts. Reads backwards from ``end``, so only the
    last line is read."""
    step = 64 * 1024
    with open(path, "rb") as fh:
        pos = end
        while pos > start:
            a = max(start, pos - step)
            fh.seek(a)
            block = fh.read(pos - a)
            at = block.rfind(b"\n")
            if at >= 0:
                return a + at + 1
            pos = a
    return start


def collect_local(paths: Sequence[Path], out: Path, since: float | None = None, until: float | None = None,
                  queries: Mapping[str, str] | None = None, *, progress: Progress | None = None,
                  memory_limit: str | None = None,
                  max_decompressed_bytes: int = MAX_DECOMPRESSED_BYTES,
                  account_id: str = DEFAULT_ACCOUNT_ID) -> dict[str, Any]:
    """Ingest log files and write every standard table plus the manifest under ``out``.

    Args:
        paths: files and/or directories (read recursively; hidden files skipped; FIFOs, sockets, dangling links,
            symlink loops and links to directories inside a directory counted in ``skipped_entries``). Any of the
            ingest formats, plain or gzip.
        out: output directory (created).
        since, until: table window in epoch seconds, both inclusive; None = unbounded.
        queries: {table: query text} override (default: collector/queries/*.insights).
        progress: optional callback, called before each file and each table (for a progress bar).
        memory_limit: DuckDB memory limit (e.g. ``"512MB"``); default ``IDEMWATCH_MEMORY_LIMIT`` or
            ``DEFAULT_MEMORY_LIMIT``.
        max_decompressed_bytes: decompressed bytes kept per gzip source; the rest is not read, counted
            ``decompressed_size_cap_reached``.
        account_id: 12-digit account of the events (``@log`` = ``"<account_id>:<log group>"``, the tables'
            ``account_id``); fixed for ``out`` by its first collection (ingested events keep theirs). Events of an
            ``out`` collected before the account existed (bare names) get this one.
    Returns:
        The manifest dict (also written to ``out/manifest.json``).
    Raises:
        CollectError: a path does not exist or is not a regular file, a file named in ``paths`` is not a log file
            (binary), a table has no query, another run holds ``out`` (``CollectLockedError``), or ``out`` was
            collected with another ``account_id``. (A binary file
            found inside a directory is skipped and counted instead.) Sources collected before the error stay
            committed; nothing of the failing source is.
        collector.insights.QueryError: a standard query does not compile.
    """
    _import_ahead()
    out = Path(out)
    queries = dict(queries) if queries is not None else load_standard_queries()
    files, skipped_entries = _iter_files(paths)
    limit = memory_limit or os.environ.get("IDEMWATCH_MEMORY_LIMIT") or DEFAULT_MEMORY_LIMIT
    with run_lock(out, "collect local"):
        manifest_path = out / "manifest.json"
        previous = json.loads(manifest_path.read_text()) if manifest_path.is_file() else {}
        if previous.get("sources") and previous.get("account_id", account_id) != account_id:
            raise CollectError(f"{out} holds events of account {previous['account_id']}, not {account_id}: "
                               "collect into another --out, or pass the same --account-id")
        with _out_of_memory(f"collecting into {out}", limit, "what was committed before stays, the manifest is the "
                            "last run's"), EventStore(out / EVENTS_DB, memory_limit=limit,
                                                      max_decompressed_bytes=max_decompressed_bytes,
                                                      account_id=account_id) as store:
            if previous.get("sources") and "account_id" not in previous:
                _qualify_log(store, account_id)
            _retain_block_memory(store.connection)
            state = _SourcesState(store, previous.get("sources", []))
            run = _ingest_sources(files, state, store, progress)
            run["skipped_entries"] = skipped_entries
            from collector.local_tables import TABLE_WORKERS, write_standard_tables

            _prepare_tables_phase(store.connection)
            workers = store.cursors(TABLE_WORKERS)  # set up before hardening locks every setting
            try:
                # lock the database down before any query runs: after the ingest (read_csv needs file access);
                # the tables are written through pyarrow, which needs none
                harden_connection(store.connection)
                with _out_of_memory("writing the tables", limit, "every source is collected (a run with more memory "
                                    "writes the tables without reading them again), the manifest is the last run's"):
                    tables_info, window = write_standard_tables(store, out, queries, since, until, progress,
                                                                workers=workers)
            finally:
                for con in workers:
                    con.close()
            sources = dict(state.sources)
    counts = {"events": 0, "skipped": 0, "repaired": 0}
    by_reason: dict[str, int] = defaultdict(int)
    for s in sources.values():
        for k in counts:
            counts[k] += s["ingest"][k]
        for reason, n in s["ingest"]["by_reason"].items():
            by_reason[reason] += n
    for kind, n in skipped_entries.items():
        by_reason[Reason.SKIPPED_ENTRY_PREFIX + kind] += n
    manifest = {
        "manifest_version": MANIFEST_VERSION,
        "collector": "local",
        "collected_at": _iso(datetime.now(UTC)),
        "account_id": account_id,
        "time_window": window,
        "sources": sorted(sources.values(), key=lambda s: s["path"]),
        "ingest": {**counts, "by_reason": dict(by_reason)},
        "this_run": run,
        "queries": {name: {"file": f"collector/queries/{name}.insights",
                           "sha256": _sha256_text(text)} for name, text in queries.items()},
        "tables": tables_info,
    }
    tmp = manifest_path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(manifest, indent=2, sort_keys=False, default=str))
    tmp.replace(manifest_path)
    return manifest


_UNITS = {"bytes": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40, "PiB": 1 << 50}
"""The units DuckDB prints a memory setting in (``current_setting('memory_limit')``, e.g. ``488.2 MiB``)."""


def _memory_limit_bytes(con: Any) -> int:
    """DuckDB's current ``memory_limit`` in bytes.

    Raises:
        CollectError: DuckDB prints its memory limit in a form this does not read (a DuckDB upgrade).
    """
    shown = con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]
    number, _, unit = str(shown).partition(" ")
    if unit not in _UNITS:
        raise CollectError(f"cannot read DuckDB's memory limit {shown!r}")
    return int(float(number) * _UNITS[unit])


def _retain_block_memory(con: Any) -> None:
    """Let DuckDB keep ``BLOCK_ALLOCATOR_FRACTION`` of its memory limit for its buffer blocks once touched
    (``block_allocator_memory``), instead of handing freed blocks back to the kernel and faulting fresh zeroed pages
    in for the next ones. It stays within the memory limit (the blocks are the buffer pool's)."""
    con.execute("SET block_allocator_memory = $1", [f"{int(_memory_limit_bytes(con) * BLOCK_ALLOCATOR_FRACTION)}B"])


def _import_ahead() -> None:
    """Import the table phase's modules (``collector.local_tables``: pyarrow with its compute and Parquet modules,
    the post-processing) on a daemon thread, so that they load while the ingest runs instead of before it: about
    a fraction of a second of one core, most of it while DuckDB's INSERT holds no GIL. An import error is not raised here: the table phase imports the module again
    and raises it there."""
    def load() -> None:
        try:
            import collector.local_tables  # noqa: F401
        except BaseException:  # noqa: BLE001, S110 - raised again, with its traceback, by the table phase's own import
            pass

    threading.Thread(target=load, name="idemwatch-import-ahead", daemon=True).start()


def _prepare_tables_phase(con: Any) -> None:
    """DuckDB's settings for the table phase, made after the ingest and before the connection is hardened (which
    locks them): ``_limit_tables_memory`` and ``_share_threads``.

    Raises:
        CollectError: DuckDB prints its memory limit in a form this does not read (a DuckDB upgrade).
    """
    _limit_tables_memory(con)
    _share_threads(con)


def _share_threads(con: Any) -> None:
    """Give each of the ``TABLE_WORKERS`` tables written at once its share of DuckDB's threads (``threads``: the
    machine's cores by default; at least one each), instead of every query starting that many. The ingest, one
    statement, keeps them all: fewer threads than cores to switch between, and no partial aggregates and sorts to
    merge."""
    from collector.local_tables import TABLE_WORKERS

    threads = int(con.execute("SELECT current_setting('threads')").fetchall()[0][0])
    con.execute(f"SET threads = {max(1, threads // TABLE_WORKERS)}")


def _limit_tables_memory(con: Any) -> None:
    """Lower DuckDB's memory limit to ``TABLES_MEMORY_FRACTION`` of the ingest's for the table phase (before the
    connection is hardened, which locks the settings). DuckDB evicts cached blocks to get there.

    Raises:
        CollectError: DuckDB prints its memory limit in a form this does not read (a DuckDB upgrade).
    """
    limit = _memory_limit_bytes(con)
    con.execute("SET memory_limit = $1", [f"{int(limit * TABLES_MEMORY_FRACTION)}B"])


def _qualify_log(store: EventStore, account_id: str) -> None:
    """Events of a store collected before ``@log`` carried the account (bare log group names) get this run's
    account, so the tables never mix qualified and bare names."""
    from collector.insights.constants import ACCOUNT_ID_PATTERN
    from collector.insights.sql import quote_ident

    with store.transaction():
        store.connection.execute(f'UPDATE {quote_ident(store.table)} SET "@log" = $1 || \':\' || "@log" '
                                 f'WHERE NOT regexp_matches("@log", $2)', [account_id, f"^{ACCOUNT_ID_PATTERN}:"])


def _sha256_text(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _without(ranges: list[list[int]], gone: Sequence[int]) -> list[list[int]]:
    """``ranges`` of ``@seq`` without the range ``gone`` (the last events of a source, so the end of one range)."""
    out = []
    for lo, hi in ranges:
        if hi < gone[0] or lo > gone[1]:
            out.append([lo, hi])
        elif lo < gone[0]:
            out.append([lo, gone[0] - 1])
    return out


def _bytes_read(report: IngestReport) -> int:
    return sum(r.bytes_read for r in report.per_file.values())


@contextmanager
def _out_of_memory(doing: str, limit: str, state: str) -> Iterator[None]:
    """Turn DuckDB's out-of-memory error (``duckdb.OutOfMemoryException``) in the block into an ``OutOfMemoryError``
    with a one-line message: what was being done (``doing``), DuckDB's reason, the limit, what is kept (``state``)
    and how to raise the limit.

    Raises:
        OutOfMemoryError: DuckDB ran out of memory in the block.
    """
    import duckdb

    try:
        yield
    except duckdb.OutOfMemoryException as exc:
        reason = next((line.strip() for line in str(exc).splitlines() if line.strip()), "out of memory")
        raise OutOfMemoryError(
            f"{doing}: DuckDB ran out of memory within its memory limit of {limit} ({reason}); {state}. Run again "
            f"with a larger --memory-limit (or IDEMWATCH_MEMORY_LIMIT), e.g. 2GB") from exc


def _ingest_sources(files: list[tuple[Path, bool]], state: _SourcesState, store: EventStore,
                    progress: Progress | None = None) -> dict[str, Any]:
    """Ingest what is new in ``files``, one transaction per source; returns this run's counts.

    A source's SHA-256 decides only when its record has the same size (unchanged, or rewritten in place); otherwise it
    is only recorded, so it is computed on a thread while the source is ingested: hashlib and the line check of
    large plain files (``EventStore``) both work without the GIL, so the hash takes no wall time of its own."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="idemwatch-sha256") as hasher:
        return _ingest_each(hasher, files, state, store, progress)


def _ingest_each(hasher: ThreadPoolExecutor, files: list[tuple[Path, bool]], state: _SourcesState,
                 store: EventStore, progress: Progress | None) -> dict[str, Any]:
    run = {"new": 0, "unchanged": 0, "appended": 0, "replaced": 0, "events_added": 0, "events_removed": 0,
           "skipped_lines": 0}
    for i, (f, named) in enumerate(files):
        if progress is not None:
            progress("ingest", str(f), i, len(files))
        key = str(f.resolve())
        size = f.stat().st_size
        prev = state.sources.get(key)
        digest: Future[str] | str
        if prev is not None and prev["size"] == size:
            digest = sha256_file(f, size)
            if prev["sha256"] == digest:
                run["unchanged"] += 1
                continue
        else:
            digest = hasher.submit(sha256_file, f, size)
        entry: dict[str, Any] = {"path": key, "size": size, "collected_at": _iso(datetime.now(UTC))}
        can_grow = appendable(f)
        grew = (prev is not None and size > prev["size"] and can_grow
                and sha256_file(f, prev["size"]) == prev["sha256"])
        with _out_of_memory(f"reading {f}", store.memory_limit or "DuckDB's default",
                            "nothing of this file was collected (the files before it were)"), store.transaction():
            lo = store.next_seq
            if grew:
                assert prev is not None
                ranges = [list(r) for r in prev["seq_ranges"]]
                ingest = dict(prev["ingest"])
                start = prev["size"]
                old_tail = prev.get("tail")
                if old_tail:  # the line that was being written: its events and counts go, it is read again whole
                    start = old_tail["offset"]
                    if old_tail["seq_range"]:
                        store.delete_seq_ranges([old_tail["seq_range"]])
                        ranges = _without(ranges, old_tail["seq_range"])
                    ingest = _merge_reports(ingest, old_tail["ingest"], -1)
                report, tail = _ingest_range(store, f, start, size, prev.get("format"), named=named,
                                             appendable_file=can_grow)
                ingest = _merge_reports(ingest, _report_json(report))
                read = prev.get("bytes_read", prev["size"]) - (prev["size"] - start) + _bytes_read(report)
            else:
                if prev is not None:
                    run["events_removed"] += store.delete_seq_ranges(prev.get("seq_ranges", []))
                report, tail = _ingest_range(store, f, 0, size, None, named=named, appendable_file=can_grow)
                ranges = []
                ingest = _report_json(report)
                read = _bytes_read(report)
            if store.next_seq > lo:
                ranges.append([lo, store.next_seq - 1])
            first = next(iter(report.per_file.values()), None)
            entry.update({"sha256": digest if isinstance(digest, str) else digest.result(), "seq_ranges": ranges,
                          "format": ((prev or {}).get("format") if grew else None) or (first.format if first else None),
                          "bytes_read": read, "events": ingest["events"],
                          "ingest_path": first.path if first else None, "ingest": ingest})
            if tail:
                entry["tail"] = tail
            state.put(entry)
        run["appended" if grew else "replaced" if prev is not None else "new"] += 1
        run["events_added"] += report.events
        run["skipped_lines"] += report.skipped
    return run
