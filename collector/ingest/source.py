"""Reading a source file: gzip detection and decompression that survives a truncated stream.

CloudWatch export-to-S3 objects are gzip files (``000000.gz``); any other format may be gzipped too.
A gzip stream cut short (interrupted download) still yields everything decoded up to the cut; the
cut is reported, never raised.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from pathlib import Path

GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 8 * 1024 * 1024


@dataclass
class SourceBytes:
    """Decoded bytes of one source. ``truncated``: the gzip stream ended before its end marker."""

    data: bytes
    compressed: bool
    truncated: bool = False


def read_source(path: Path) -> SourceBytes:
    """Read ``path``; gunzip when it starts with the gzip magic bytes (whatever its name).

    Raises:
        OSError: the file cannot be read.
    """
    with open(path, "rb") as fh:
        head = fh.read(2)
        fh.seek(0)
        if head != GZIP_MAGIC:
            return SourceBytes(fh.read(), compressed=False)
        return gunzip_stream(fh)


def gunzip_stream(fh) -> SourceBytes:
    """Decompress every gzip member of ``fh``; a truncated or corrupt tail ends the data with ``truncated``."""
    out: list[bytes] = []
    d = zlib.decompressobj(wbits=31)
    fed = False  # the current member has seen input
    truncated = False
    while not truncated:
        chunk = fh.read(_CHUNK)
        if not chunk:
            break
        while chunk:
            if not fed and not chunk.strip(b"\x00"):
                chunk = b""  # zero padding after the last member
                break
            fed = True
            try:
                out.append(d.decompress(chunk))
            except zlib.error:
                truncated = True
                break
            if d.eof:
                chunk = d.unused_data
                d, fed = zlib.decompressobj(wbits=31), False
            else:
                chunk = b""
    if not truncated and fed:
        try:
            out.append(d.flush())
        except zlib.error:
            truncated = True
        if not d.eof:
            truncated = True
    return SourceBytes(b"".join(out), compressed=True, truncated=truncated)
