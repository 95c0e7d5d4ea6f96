"""``aws logs filter-log-events`` / ``get-log-events`` JSON output.

Shape (CloudWatch Logs API FilterLogEvents / GetLogEvents, as the AWS CLI prints it)::

    {"events": [{"logStreamName": str, "timestamp": epoch ms, "message": str,
                 "ingestionTime": epoch ms, "eventId": str}, ...],
     "searchedLogStreams": [...], "nextToken": str}

get-log-events events lack ``logStreamName`` (the stream is the request's). Also accepted: a JSON array of
such documents (pages saved one after the other) or a bare array of events. A document cut short (an
interrupted download) still yields every complete event before the cut; the cut event is counted skipped
(``filter_log_events_truncated``).
"""

from __future__ import annotations

import json
import re
from typing import Any

from collector.ingest.constants import Reason
from collector.ingest.types import FileReport

TRUNCATED = Reason.DOCUMENT_TRUNCATED
_EVENTS_KEY = re.compile(r'"events"\s*:\s*\[')


def parse_document(text: str, report: FileReport) -> list[dict[str, Any]]:
    """The event dicts of a filter-log-events / get-log-events document (possibly truncated)."""
    try:
        doc = json.loads(text)
    except ValueError:
        return _salvage(text, report)
    return list(_events_of(doc))


def _events_of(doc: Any):
    if isinstance(doc, dict):
        if isinstance(doc.get("events"), list):
            yield from (e for e in doc["events"])
    elif isinstance(doc, list):
        for item in doc:
            if isinstance(item, dict) and "events" in item:
                yield from _events_of(item)
            else:
                yield item


def _salvage(text: str, report: FileReport) -> list[dict[str, Any]]:
    dec = json.JSONDecoder()
    out: list[dict[str, Any]] = []
    for m in _EVENTS_KEY.finditer(text):
        pos = m.end()
        while True:
            while pos < len(text) and text[pos] in " \t\r\n,":
                pos += 1
            if pos >= len(text) or text[pos] == "]":
                break
            try:
                obj, pos = dec.raw_decode(text, pos)
            except ValueError:
                report.count(TRUNCATED)
                return out
            out.append(obj)
    if not out:
        report.count(TRUNCATED)
    return out
