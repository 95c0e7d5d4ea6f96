"""Reading a source file: gzip detection and decompression that survives a truncated stream.

CloudWatch export-to-S3 objects are gzip files (``000000.gz``); any other format may be gzipped too.
A gzip stream cut short (interrupted download) still yields everything decoded up to the cut; the
cut is reported, never raised.
"""

from __future__ import annotations

import os
import zlib
from dataclasses import dataclass
from pathlib import Path

from collector.ingest.constants import MAX_DECOMPRESSED_BYTES

GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 8 * 1024 * 1024


@dataclass
class SourceBytes:
    """Decoded bytes of one source. ``truncated``: the gzip stream ended before its end marker. ``capped``: the
    decompressed data reached ``max_bytes`` and the rest was not read."""

    data: bytes
    compressed: bool
    truncated: bool = False
    capped: bool = False


def read_source(path: Path, max_bytes: int = MAX_DECOMPRESSED_BYTES) -> SourceBytes:
    """Read ``path``; gunzip when it starts with the gzip magic bytes (whatever its name), keeping at most
    ``max_bytes`` decompressed bytes (a gzip bomb stops there, ``capped``). A plain file is read whole.

    Raises:
        OSError: the file cannot be read.
    """
    with open(path, "rb") as fh:
        head = fh.read(2)
        fh.seek(0)
        if head != GZIP_MAGIC:
            return SourceBytes(fh.read(), compressed=False)
        return gunzip_stream(fh, max_bytes)


def gunzip_stream(fh, max_bytes: int = MAX_DECOMPRESSED_BYTES) -> SourceBytes:
    """Decompress every gzip member of ``fh`` in 8 MiB steps of output (memory: the kept output plus one step,
    whatever the compression ratio); a truncated or corrupt tail ends the data with ``truncated``; output beyond
    ``max_bytes`` is not produced (``capped``)."""
    out: list[bytes] = []
    kept = 0
    d = zlib.decompressobj(wbits=31)
    fed = False  # the current member has seen input
    truncated = capped = False
    while not (truncated or capped):
        chunk = fh.read(_CHUNK)
        if not chunk:
            break
        while chunk and not capped:
            if not fed and not chunk.strip(b"\x00"):
                chunk = b""  # zero padding after the last member
                break
            fed = True
            try:
                piece = d.decompress(chunk, _CHUNK)
            except zlib.error:
                truncated = True
                break
            if kept + len(piece) >= max_bytes:
                piece, capped = piece[: max_bytes - kept], True
            out.append(piece)
            kept += len(piece)
            if d.eof:
                chunk = d.unused_data
                d, fed = zlib.decompressobj(wbits=31), False
            else:
                chunk = d.unconsumed_tail
    if not (truncated or capped) and fed:
        try:
            out.append(d.flush())
        except zlib.error:
            truncated = True
        if not d.eof:
            truncated = True
    return SourceBytes(b"".join(out), compressed=True, truncated=truncated, capped=capped)


class EntryKind:
    """Kinds of directory entries that are not read as log files (counted per kind, never ignored silently)."""

    SYMLINK_LOOP = "symlink_loop"
    DANGLING_SYMLINK = "dangling_symlink"
    SYMLINK_TO_DIRECTORY = "symlink_to_directory_not_followed"
    FIFO = "fifo"
    SOCKET = "socket"
    DEVICE = "device"
    UNREADABLE = "unreadable_entry"


def entry_kind(path: Path) -> str | None:
    """None for a regular file (or a symlink to one), else its ``EntryKind`` (directories excluded by the caller)."""
    import errno
    import stat

    try:
        st = path.stat()
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return EntryKind.SYMLINK_LOOP
        if path.is_symlink():
            return EntryKind.DANGLING_SYMLINK
        return EntryKind.UNREADABLE
    mode = st.st_mode
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return EntryKind.SYMLINK_TO_DIRECTORY
    if stat.S_ISFIFO(mode):
        return EntryKind.FIFO
    if stat.S_ISSOCK(mode):
        return EntryKind.SOCKET
    return EntryKind.DEVICE


def list_log_files(directory: Path) -> tuple[list[Path], dict[str, int]]:
    """Files under ``directory`` read as log files, sorted by path, and ``{EntryKind: count}`` of the entries that
    are not (FIFOs, sockets, devices, dangling links, symlink loops, links to directories: not followed, so a link
    cannot make the walk revisit a folder). Hidden files and folders (name starting ``.``) are skipped: they are
    not logs (``.git``, editor files, the collector's own lock)."""
    files: list[Path] = []
    skipped: dict[str, int] = {}
    for root, dirs, names in os.walk(directory, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for d in list(dirs):
            if os.path.islink(os.path.join(root, d)):  # os.walk lists links to directories among ``dirs``
                dirs.remove(d)
                names.append(d)
        for name in names:
            if name.startswith("."):
                continue
            p = Path(root) / name
            kind = entry_kind(p)
            if kind is None:
                files.append(p)
            else:
                skipped[kind] = skipped.get(kind, 0) + 1
    return sorted(files), skipped
