"""Reading a source file: gzip detection and decompression that survives a truncated stream.

CloudWatch export-to-S3 objects are gzip files (``000000.gz``); any other format may be gzipped too.
A gzip stream cut short (interrupted download) still yields everything decoded up to the cut; the
cut is reported, never raised.
"""

from __future__ import annotations

import os
import zlib
from pathlib import Path
from typing import Any, BinaryIO

from collector.ingest.constants import MAX_DECOMPRESSED_BYTES

GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 8 * 1024 * 1024


class SourceReader:
    """The decoded bytes of one source as a binary stream (``read``), never held whole: bytes ``[start, end)`` of a
    plain file, or everything a gzip file decompresses to (detected by its magic bytes, whatever its name; several
    members and zero padding after the last one included). At most ``max_bytes`` decompressed bytes are produced
    (a gzip bomb stops there: ``capped``); a gzip stream cut short or corrupt ends the data (``truncated``). Memory:
    one 8 MiB step of compressed input and of output, whatever the compression ratio.

    ``peek(n)``: the first ``n`` bytes, read again by ``read``. ``compressed``: the source is gzip. ``bytes_read``:
    the source bytes consumed so far (compressed bytes for gzip)."""

    def __init__(self, fh: BinaryIO, start: int = 0, end: int | None = None,
                 max_bytes: int = MAX_DECOMPRESSED_BYTES) -> None:
        self._fh = fh
        fh.seek(start)
        self._left = None if end is None else max(0, end - start)
        self.bytes_read = 0
        self.max_bytes = max_bytes
        self.truncated = self.capped = False
        self._buf = b""
        self.compressed = start == 0 and self._raw(2, peek=True) == GZIP_MAGIC
        self._kept = 0
        self._d = zlib.decompressobj(wbits=31)
        self._fed = False  # the current gzip member has seen input
        self._pending = b""  # compressed input not yet given to the decompressor
        self._done = False

    def _raw(self, n: int, peek: bool = False) -> bytes:
        want = n if self._left is None else min(n, self._left)
        data = self._fh.read(want) if want > 0 else b""
        if peek:
            self._fh.seek(-len(data), 1)
            return data
        if self._left is not None:
            self._left -= len(data)
        self.bytes_read += len(data)
        return data

    def _produce(self) -> bytes:
        """The next piece of decoded bytes, ``b""`` at the end."""
        if not self.compressed:
            return self._raw(_CHUNK)
        while not self._done:
            if not self._pending:
                self._pending = self._raw(_CHUNK)
                if not self._pending:
                    self._finish()
                    break
            if not self._fed and not self._pending.strip(b"\x00"):
                self._pending = b""  # zero padding after the last member
                continue
            self._fed = True
            try:
                piece = self._d.decompress(self._pending, _CHUNK)
            except zlib.error:
                self.truncated = self._done = True
                break
            if self._d.eof:
                self._pending = self._d.unused_data
                self._d, self._fed = zlib.decompressobj(wbits=31), False
            else:
                self._pending = self._d.unconsumed_tail
            if self._kept + len(piece) >= self.max_bytes:
                piece, self.capped, self._done = piece[: self.max_bytes - self._kept], True, True
            self._kept += len(piece)
            if piece:
                return piece
        return b""

    def _finish(self) -> None:
        """End of the compressed input: what the decompressor still holds, and whether the stream was complete."""
        self._done = True
        if self._fed:
            try:
                tail = self._d.flush()
            except zlib.error:
                self.truncated = True
                return
            if not self._d.eof:
                self.truncated = True
            self._buf += tail[: max(0, self.max_bytes - self._kept)]
            self._kept += len(tail)

    def peek(self, n: int) -> bytes:
        while len(self._buf) < n:
            more = self._produce()
            if not more:
                break
            self._buf += more
        return self._buf[:n]

    def read(self, n: int = -1) -> bytes:
        if n < 0:
            parts = [self._buf]
            while more := self._produce():
                parts.append(more)
            self._buf = b""
            return b"".join(parts)
        while len(self._buf) < n:
            more = self._produce()
            if not more:
                break
            self._buf = self._buf + more if self._buf else more
        out, self._buf = self._buf[:n], self._buf[n:]
        return out

    def readinto(self, b: Any) -> int:
        data = self.read(len(b))
        b[: len(data)] = data
        return len(data)

    def readable(self) -> bool:
        return True


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
