"""CloudWatch console URLs: a log group, a Logs Insights query, an alarm, a runbook section.

The console's fragment formats are not an AWS API and not documented by AWS; they were taken from
URLs the console itself produces (a Logs Insights URL copied from the console, quoted in "Generate
AWS Logs Insights URL with query and search criteria", and the log-group links in "Is there a way
to generate the AWS Console URLs for CloudWatch Log Group filters?"):

- **log group**: ``#logsV2:log-groups/log-group/<name>`` with the name percent-encoded *twice*
  and ``%`` then written as ``$`` (``/aws/lambda/f`` -> ``$252Faws$252Flambda$252Ff``);
- **Logs Insights**: ``#logsV2:logs-insights`` + the text ``?queryDetail=<detail>`` percent-encoded
  once with ``%`` written as ``$``. ``<detail>`` is a JSURL-style object ``~(end~'...~start~'...
  ~timeType~'ABSOLUTE~tz~'UTC~editorString~'...~source~(~'<log group>~'...))`` that was passed through
  JavaScript's ``escape()`` first (so ``~ ( ) '`` arrive as ``$257E $2528 $2529 $2527``). Inside it a
  string value is ``'`` + the value with every character other than ``[A-Za-z0-9.-]`` written as
  ``*xx`` (lower-case hex of the code point; the console writes ``*3a`` for ``:``); numbers and
  booleans are bare;
- **alarm**: ``#alarmsV2:alarm/<name>`` with the name percent-encoded (``encodeURIComponent``).

:func:`decode_insights_url` inverts :func:`logs_insights_url` (the tests use it as the oracle).
Times are epoch **seconds** (UTC) everywhere in this module.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from urllib.parse import quote, unquote

from emitter.contract import LogKey

__all__ = [
    "alarm_url",
    "console_base",
    "decode_insights_url",
    "encode_uri_component",
    "key_query",
    "key_trail_url",
    "log_group_url",
    "logs_insights_url",
    "runbook_url",
]

_NOT_PLAIN = re.compile(r"[^A-Za-z0-9.\-]")
_JS_ESCAPED = re.compile(r"[^A-Za-z0-9@*_+\-./]")
"""What JavaScript's escape() encodes: everything but letters, digits and ``@*_+-./``."""


def encode_uri_component(s: str) -> str:
    """JavaScript's ``encodeURIComponent`` (leaves ``A-Za-z0-9 - _ . ! ~ * ' ( )``), UTF-8."""
    return quote(s, safe="!'()*~")


def console_base(region: str | None) -> str:
    """``https://<region>.console.aws.amazon.com/cloudwatch/home?region=<region>``; without a region the
    global console URL (the console then opens the user's last region)."""
    if region:
        return f"https://{region}.console.aws.amazon.com/cloudwatch/home?region={region}"
    return "https://console.aws.amazon.com/cloudwatch/home"


def log_group_url(log_group: str, region: str | None = None) -> str:
    """Console page of one log group (its streams and events)."""
    return f"{console_base(region)}#logsV2:log-groups/log-group/{_dollar(encode_uri_component(encode_uri_component(log_group)))}"


def alarm_url(alarm_name: str, region: str | None = None) -> str:
    """Console page of one alarm (state, history, graph)."""
    return f"{console_base(region)}#alarmsV2:alarm/{encode_uri_component(alarm_name)}"


def runbook_url(base: str, signal: str) -> str:
    """The runbook section of ``signal``: ``<base>#runbook-<signal id with _ as ->``."""
    return f"{base}#runbook-{signal.replace('_', '-')}"


def logs_insights_url(
    query: str,
    log_groups: Sequence[str],
    region: str | None = None,
    *,
    start_s: int | None = None,
    end_s: int | None = None,
    relative_s: int = 3_600,
) -> str:
    """Logs Insights with ``query`` over ``log_groups``, ready to run.

    Time range: absolute [``start_s``, ``end_s``] (epoch seconds, UTC) when both are given, else the
    last ``relative_s`` seconds. Raises ``ValueError`` for no log group, an inverted range or a
    non-positive relative range.
    """
    groups = list(log_groups)
    if not groups:
        raise ValueError("a Logs Insights link needs at least one log group")
    detail: list[tuple[str, object]]
    if start_s is not None and end_s is not None:
        if end_s < start_s:
            raise ValueError(f"end {end_s} is before start {start_s}")
        detail = [("end", _iso(end_s)), ("start", _iso(start_s)), ("timeType", "ABSOLUTE"), ("tz", "UTC")]
    else:
        if relative_s <= 0:
            raise ValueError("relative_s must be > 0 seconds")
        detail = [("end", 0), ("start", -int(relative_s)), ("timeType", "RELATIVE"), ("unit", "seconds")]
    detail += [("editorString", query), ("isLiveTail", False), ("source", groups)]
    jsurl = "~(" + "~".join(f"{k}{_jsurl_value(v)}" for k, v in detail) + ")"
    fragment = "?queryDetail=" + _js_escape(jsurl)
    return f"{console_base(region)}#logsV2:logs-insights{_dollar(encode_uri_component(fragment))}"


def key_query(key: str) -> str:
    """Logs Insights query for every record of one idempotency key (oldest first). The key is a string literal:
    ``\\`` and ``"`` are backslash-escaped, so no key can change the query."""
    literal = key.replace("\\", "\\\\").replace('"', '\\"')
    return (f'filter {LogKey.IDEMPOTENCY_KEY.value} = "{literal}" | fields @timestamp, {LogKey.OUTCOME.value}, '
            f"{LogKey.OPERATION.value}, @requestId, @message | sort @timestamp asc")


def key_trail_url(key: str, log_groups: Sequence[str], start_s: int, end_s: int, region: str | None = None,
                  margin_s: int = 300) -> str:
    """Logs Insights over ``log_groups`` for one key's records between ``start_s`` and ``end_s`` (epoch seconds)
    widened by ``margin_s`` on each side (retries land after the last recorded attempt)."""
    return logs_insights_url(key_query(key), log_groups, region, start_s=start_s - margin_s, end_s=end_s + margin_s)


def decode_insights_url(url: str) -> dict[str, object]:
    """The query detail of a :func:`logs_insights_url` URL as a dict (``source`` a list, numbers int,
    booleans bool). Raises ``ValueError`` when the URL is not a Logs Insights link."""
    marker = "#logsV2:logs-insights"
    if marker not in url:
        raise ValueError("not a Logs Insights URL")
    outer = unquote(url.split(marker, 1)[1].replace("$", "%"))
    if not outer.startswith("?queryDetail="):
        raise ValueError("no queryDetail in the URL")
    text = unquote(outer[len("?queryDetail="):])  # undo escape(): %XX -> char (the *xx stay)
    if not (text.startswith("~(") and text.endswith(")")):
        raise ValueError("queryDetail is not an object")
    return _parse_object(text[2:-1])


# --------------------------------------------------------------------------- encoding helpers
def _dollar(s: str) -> str:
    return s.replace("%", "$")


def _iso(epoch_s: int) -> str:
    return datetime.fromtimestamp(epoch_s, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _star(s: str) -> str:
    return _NOT_PLAIN.sub(lambda m: "".join(f"*{b:02x}" for b in m.group().encode("utf-8")), s)


def _jsurl_value(v: object) -> str:
    if isinstance(v, bool):
        return "~true" if v else "~false"
    if isinstance(v, int):
        return f"~{v}"
    if isinstance(v, str):
        return f"~'{_star(v)}"
    if isinstance(v, Iterable):
        return "~(" + "".join(_jsurl_value(x) for x in v) + ")"
    raise TypeError(f"cannot encode {type(v).__name__}")


def _js_escape(s: str) -> str:
    # JavaScript escape(): the text here is ASCII already (_star wrote every other character as *xx)
    return _JS_ESCAPED.sub(lambda m: f"%{ord(m.group()):02X}", s)


def _unstar(s: str) -> str:
    raw = re.sub(r"\*([0-9a-f]{2})", lambda m: f"%{m.group(1)}", s)
    return unquote(raw)


def _parse_object(body: str) -> dict[str, object]:
    out: dict[str, object] = {}
    i = 0
    while i < len(body):
        j = body.index("~", i)
        key = body[i:j]
        value, i = _parse_value(body, j + 1)
        out[key] = value
        if i < len(body):
            if body[i] != "~":
                raise ValueError(f"unexpected {body[i]!r} at {i}")
            i += 1
    return out


def _parse_value(body: str, i: int) -> tuple[object, int]:
    if body[i] == "'":
        j = i + 1
        while j < len(body) and body[j] not in "~)":
            j += 1
        return _unstar(body[i + 1:j]), j
    if body[i] == "(":
        items: list[object] = []
        i += 1
        while body[i] == "~":
            v, i = _parse_value(body, i + 1)
            items.append(v)
        if body[i] != ")":
            raise ValueError(f"unterminated list at {i}")
        return items, i + 1
    j = i
    while j < len(body) and body[j] not in "~)":
        j += 1
    word = body[i:j]
    if word in ("true", "false"):
        return word == "true", j
    return int(word), j
