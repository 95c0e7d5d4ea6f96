"""The one sanitiser for text printed to a terminal.

Resource names in templates and stack configs, log messages and AWS names are controlled by whoever wrote them.
Printed raw, an escape sequence inside one drives the reader's terminal: OSC 52 writes the clipboard, OSC 8 plants
a hyperlink, OSC 0 retitles the window, CSI clears the screen or moves the cursor, a carriage return overwrites the
line, bidirectional overrides reorder what is shown (CVE-2021-42574, "Trojan Source"). Every table and message
that can carry such text goes through :func:`safe`, which replaces each control character with a visible escape
(``\\x1b``, ``\\x9b``, ``\\u202e``): the whole sequence is printed as inert text, nothing is hidden or dropped.

Escaped (Unicode category Cc, plus the format characters that reorder or break lines):

- C0 controls U+0000-U+001F (NUL, BEL, BS, TAB, LF unless kept, CR, ESC, ...) and DEL U+007F;
- C1 controls U+0080-U+009F (an 8-bit CSI U+009B or OSC U+009D starts a sequence without ESC);
- the bidirectional controls of UAX #9 (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069);
- the line and paragraph separators U+2028 and U+2029.

A backslash is printed as it is: ``\\x1b`` in the output is either an escaped ESC or those four characters, and
neither reaches the terminal as a control.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:  # pragma: no cover
    from rich.text import Text

__all__ = ["CONTROL_CODE_POINTS", "cell", "echo", "safe"]

CONTROL_CODE_POINTS: frozenset[int] = frozenset((
    *range(0x20), 0x7F, *range(0x80, 0xA0),
    0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A),
    0x2028, 0x2029,
))
"""Every code point :func:`safe` escapes."""

_ESCAPE = {c: f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}" for c in CONTROL_CODE_POINTS}
_ESCAPE_KEEP_NEWLINES = {c: e for c, e in _ESCAPE.items() if c != 0x0A}


def safe(text: object, *, newlines: bool = False) -> str:
    """``str(text)`` with every control character of :data:`CONTROL_CODE_POINTS` replaced by a visible escape.

    ``newlines=True`` keeps line feeds (a multi-line message or a rendered table); otherwise a line feed is escaped
    too, so one value (a table cell, a name) stays on one line and cannot forge another row.

    >>> safe("orders\\x1b]52;c;ZWNobyBwd25lZA==\\x07")
    'orders\\\\x1b]52;c;ZWNobyBwd25lZA==\\\\x07'
    """
    return str(text).translate(_ESCAPE_KEEP_NEWLINES if newlines else _ESCAPE)


def echo(message: object = "", *, err: bool = False, newlines: bool = False) -> None:
    """``click.echo`` of :func:`safe`: how commands print a line that may quote names (``newlines=True`` for a
    multi-line text such as a rendered table)."""
    click.echo(safe(message, newlines=newlines), err=err)


def cell(value: object) -> Text:
    """One table cell for rich: :func:`safe` text as a ``rich.text.Text``, so rich neither reads ``[...]`` in it as
    markup (``[link=...]`` would emit OSC 8) nor passes a control character through. ``None`` is an empty cell."""
    from rich.text import Text

    return Text("" if value is None else safe(value))
