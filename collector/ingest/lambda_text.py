"""Lambda text log format: grouping physical lines into CloudWatch events.

What the Lambda runtime writes (../shared/samples/lambda-text-format.log, real awslambdaric output):
- platform lines ``INIT_START ...``, ``START RequestId: <id> Version: $LATEST``, ``END RequestId: <id>``,
  ``REPORT RequestId: <id>\\tDuration: 43.90 ms\\tBilled Duration: 152 ms\\tMemory Size: 128 MB\\t
  Max Memory Used: 46 MB\\tInit Duration: 107.26 ms\\t`` (``Status: timeout`` / ``Status: error`` when
  so); with active tracing the ``XRAY TraceId: ...`` line belongs to the REPORT event;
- runtime log lines ``[LEVEL]\\t<ISO-8601>\\t<request id>\\t<message>`` (the request id may be empty);
  a logged traceback continues on the following lines of the same event;
- runtime errors ``[ERROR] <Type>: <message>`` followed by ``Traceback ...`` lines;
- ``<ISO-8601> <request id> Task timed out after 3.00 seconds`` and
  ``RequestId: <id> Error: Runtime exited with error: ...`` (its next line ``Runtime.ExitError`` included);
- anything the handler printed: a complete JSON object line is its own event.

Rule: a line that matches ``sniff.LAMBDA_TEXT_START`` or is a complete JSON object starts a new event;
any other line continues the current event (joined with ``\\n``). A leading continuation line with no
event before it starts one.

Timestamps: a ``[LEVEL]\\t<ts>`` or ``<ts> <request id>`` prefix gives the event's time; a JSON event may
carry its own (resolved in SQL); the others (platform lines have none) take the time of the previous
event in the file, else of the next one (resolved in SQL, counted ``timestamp_from_neighbour_event``).
"""

from __future__ import annotations

import re
from datetime import datetime

from collector.ingest.sniff import LAMBDA_TEXT_START, is_json_object_line

_TS_IN_LINE = re.compile(
    r"^(?:\[[A-Z]+\]\t)?(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z)[\t ]"
)


def iso_to_ms(text: str) -> int | None:
    """Epoch ms of an ISO-8601 timestamp (``Z`` or offset, optional fraction, ``,`` as decimal mark)."""
    s = text.strip().replace(",", ".")
    if s.endswith("Z"):
        s = s[:-1] + "+00:00"
    s = re.sub(r"([+-]\d\d)(\d\d)$", r"\1:\2", s)
    try:
        dt = datetime.fromisoformat(s)
    except ValueError:
        return None
    if dt.tzinfo is None:
        from datetime import UTC

        dt = dt.replace(tzinfo=UTC)
    return round(dt.timestamp() * 1000)


def starts_event(line: str) -> bool:
    """True when ``line`` starts a new event (the rule in the module docstring)."""
    return bool(LAMBDA_TEXT_START.match(line)) or (line[:1] == "{" and is_json_object_line(line))


def last_event_start(lines: list[str]) -> int:
    """Index of the last line after the first that starts an event, else 0: ``frame_events(lines[:i])`` followed by
    framing ``lines[i:]`` with what comes after gives the events of framing all at once."""
    for i in range(len(lines) - 1, 0, -1):
        if starts_event(lines[i]):
            return i
    return 0


def frame_events(lines: list[str]) -> list[tuple[int | None, str, int]]:
    """Group ``lines`` (terminators removed) into events ``(timestamp ms | None, message, lines)``.

    Blank lines inside an event are kept in its message; blank lines between events are dropped (the
    caller counts them as ``lines - sum(lines per event)``).
    """
    events: list[list] = []  # [ts, [lines], n]
    for line in lines:
        starts = starts_event(line)
        if starts or not events:
            if not line.strip() and not starts:
                continue  # blank line before any event / between events
            m = _TS_IN_LINE.match(line)
            events.append([iso_to_ms(m.group(1)) if m else None, [line], 1])
        elif not line.strip():
            events[-1][2] += 1
            events[-1][1].append(line)
        else:
            events[-1][1].append(line)
            events[-1][2] += 1
    out = []
    for ts, parts, n in events:
        # trailing blank lines belong to no event
        while len(parts) > 1 and not parts[-1].strip():
            parts.pop()
            n -= 1
        out.append((ts, "\n".join(parts), n))
    return out
