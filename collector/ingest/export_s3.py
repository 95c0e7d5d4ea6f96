"""CloudWatch export-to-S3 objects whose messages span several lines.

``CreateExportTask`` writes ``<ISO-8601 timestamp> <message>\\n`` per event and does not escape newlines
inside a message, so a multi-line message (a Python traceback logged in the Lambda text format, a
pretty-printed JSON event) continues on lines without the timestamp prefix. The bulk SQL path handles
the usual one-line-per-event object; when a line without the prefix is present, this framing is used
instead: a prefixed line starts an event, any other line continues the current one (joined with ``\\n``,
counted ``continuation_lines_joined``); a line without prefix before the first event is an event of its
own with a neighbour's timestamp (``export_line_without_timestamp``).
"""

from __future__ import annotations

from collector.ingest.constants import Reason
from collector.ingest.lambda_text import iso_to_ms
from collector.ingest.sniff import ISO_PREFIX
from collector.ingest.types import FileReport


def frame_export(lines: list[str], report: FileReport) -> list[dict[str, object]]:
    """Events ``{"timestamp": ms | None, "message": str}`` of an export object's lines (terminators removed).

    Blank lines between events are counted ``blank_line``; inside a multi-line message they are kept.
    """
    events: list[list] = []  # [ts, [lines]]
    joined = orphan = blank = 0
    for line in lines:
        m = ISO_PREFIX.match(line)
        ts = iso_to_ms(m.group(0)[:-1]) if m else None
        if ts is not None:
            events.append([ts, [line[m.end():]]])  # type: ignore[union-attr]
        elif not line.strip():
            if events:
                events[-1][1].append(line)
            else:
                blank += 1
        elif events:
            events[-1][1].append(line)
            joined += 1
        else:
            events.append([None, [line]])
            orphan += 1
    out = []
    for ts, parts in events:
        while len(parts) > 1 and not parts[-1].strip():
            parts.pop()
            blank += 1
        out.append({"timestamp": ts, "message": "\n".join(parts)})
    report.count(Reason.MULTILINE_JOINED, joined)
    report.count(Reason.EXPORT_LINE_WITHOUT_TIMESTAMP, orphan)
    report.count(Reason.BLANK_LINE, blank)
    return out
