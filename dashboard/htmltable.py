"""A small read-only table as one escaped HTML ``<table>`` (``st.html``), for a page where the data grid costs more
than the table is worth: the Overview's health table.

Why not ``st.dataframe``: it makes the browser fetch and evaluate the data grid's chunks (about 1.6 MB of JavaScript:
the grid, Arrow, moment, a JSON viewer) before the table draws; on the Overview at 1M events that was about a third
of the page's load (``benchmarks/dashboard_bench.py``). Why not a markdown table: it cannot scroll sideways inside
its box, so a table wider than the page pushed every row to the height of its longest wrapped cell.
What the grid had and this has not: sorting by a header click, column resizing, CSV download. Use it for a table
whose row order is the point (the health verdict, worst first).

Safety: this is the dashboard's only HTML sink (``st.html`` sanitizes with DOMPurify but keeps and runs
``<script>``), so nothing reaches it unescaped: every cell, header and tooltip is text passed through
``html.escape`` (``& < > " '``) and every attribute is double-quoted; a link target is a relative URL made by the
caller from percent-encoded parts (``dashboard.urlstate.link``, ``dashboard.links``), checked here
(:func:`safe_href`), and escaped too. The markup and the style sheet around the cells are constants of this module.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import pandas as pd
import streamlit as st

__all__ = ["MISSING", "Column", "fmt_int", "fmt_percent", "frame_columns", "html_table", "is_missing", "safe_href",
           "show", "show_frame"]

MISSING = "–"
"""What an empty cell shows (no value, NaN): a cell is never blank, so a row reads as complete."""
BADGE_COLOURS = ("red", "orange", "green")
"""Badge colours a column may use (``Column.badge``); each has a class in :data:`STYLE`."""
CLASS = "idw-table"
"""CSS class of the table's scroll box (tests and the style sheet address it)."""
STYLE = f"""<style>
.{CLASS} {{ overflow-x: auto; max-width: 100%; }}
.{CLASS} table {{ border-collapse: collapse; font-size: 0.875rem; line-height: 1.35; margin: 0; }}
.{CLASS} th, .{CLASS} td {{ border: 1px solid rgba(128, 128, 128, 0.3); padding: 0.25rem 0.25rem;
  vertical-align: top; }}
.{CLASS} th {{ font-weight: 600; text-align: left; background: rgba(128, 128, 128, 0.08); }}
.{CLASS} th[title] {{ cursor: help; text-decoration: underline dotted rgba(128, 128, 128, 0.6); }}
.{CLASS} .r {{ text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }}
.{CLASS} th {{ white-space: nowrap; vertical-align: bottom; }}
.{CLASS} .c {{ text-align: center; }}
.{CLASS} .nw {{ white-space: nowrap; }}
.{CLASS} .wrap {{ min-width: 8rem; }}
.{CLASS} a {{ color: #3d8bd9; }}
.{CLASS} .bar {{ display: inline-block; width: 4rem; height: 0.55rem; margin-right: 0.4rem;
  background: rgba(128, 128, 128, 0.15); border-radius: 0.2rem; overflow: hidden; }}
.{CLASS} .bar > span {{ display: block; height: 100%; background: #3d8bd9; }}
.{CLASS} .b {{ border-radius: 0.25rem; padding: 0 0.3rem; font-size: 0.8rem; font-weight: 600; }}
.{CLASS} .b-red {{ color: #e0454a; background: rgba(255, 75, 75, 0.14); }}
.{CLASS} .b-orange {{ color: #d2751a; background: rgba(255, 164, 33, 0.16); }}
.{CLASS} .b-green {{ color: #2f9e5b; background: rgba(33, 195, 84, 0.14); }}
</style>"""
"""The table's style sheet: colours that read on the light and the dark theme alike (an ``st.html`` block cannot
read the theme's colours), numbers right-aligned in tabular figures."""
_HREF = re.compile(r"[A-Za-z0-9_\-/.]*(\?[A-Za-z0-9_\-.~%+=&]*)?")
"""A relative URL of letters, digits, ``_-/.`` and a percent-encoded query: no scheme (``javascript:``), no host,
no quote, no space."""


def safe_href(url: str) -> str:
    """``url`` when it is a relative URL made of :data:`_HREF`'s characters (a path and a percent-encoded query,
    as ``urlencode`` writes it), else ValueError: a link target here never carries a scheme, a host, a quote or
    raw text."""
    if not _HREF.fullmatch(url) or url.startswith("//"):
        raise ValueError(f"not a relative, percent-encoded URL: {url!r}")
    return url


@dataclass(frozen=True)
class Column:
    """One column of :func:`html_table`.

    ``name``: the frame's column; ``header``: its header text; ``help``: the header's tooltip (``title``);
    ``fmt``: value -> the text shown (plain text, escaped afterwards; default ``str``; NaN/None show
    :data:`MISSING` without calling it); ``align``: ``left``, ``right`` (numbers: tabular figures, no wrap) or
    ``center``; ``wrap``: long text that may wrap (a minimum width instead of one line); ``link``: row (the frame's
    columns by name) -> a relative URL (:func:`safe_href`) or None; ``badge``: shown text -> one of
    :data:`BADGE_COLOURS`, the text drawn as a coloured badge; ``bar``: the largest value of a numeric column, each
    cell then drawn with a bar of ``value / bar`` of its width before the number (0 to 1, clipped).
    """

    name: str
    header: str
    fmt: Callable[[Any], str] = str
    align: Literal["left", "right", "center"] = "left"
    link: Callable[[Mapping[str, Any]], str | None] | None = None
    badge: Mapping[str, str] | None = None
    help: str | None = None
    wrap: bool = False
    bar: float | None = None


def is_missing(v: Any) -> bool:
    """True for None and NaN/NaT/pd.NA (a cell that shows :data:`MISSING`)."""
    return v is None or (not isinstance(v, str) and bool(pd.isna(v)))


def _classes(col: Column) -> str:
    c = {"left": "nw", "right": "r", "center": "c"}[col.align]
    return "wrap" if col.wrap and col.align == "left" else c


def _cell(col: Column, row: Mapping[str, Any]) -> str:
    v = row[col.name]
    text = MISSING if is_missing(v) else col.fmt(v)
    shown = html.escape(text or MISSING)
    colour = (col.badge or {}).get(text)
    if colour is not None:
        if colour not in BADGE_COLOURS:
            raise ValueError(f"badge colour {colour!r} is not one of {BADGE_COLOURS}")
        shown = f'<span class="b b-{colour}">{shown}</span>'
    if col.bar is not None and text != MISSING:
        share = min(1.0, max(0.0, float(v) / col.bar)) if col.bar > 0 else 0.0
        shown = f'<span class="bar"><span style="width:{share * 100:.1f}%"></span></span>{shown}'
    url = col.link(row) if col.link is not None and text != MISSING else None
    if url:
        shown = f'<a href="{html.escape(safe_href(url))}" target="_blank" rel="noopener noreferrer">{shown}</a>'
    return f'<td class="{_classes(col)}">{shown}</td>'


def html_table(df: pd.DataFrame, columns: Sequence[Column], *, caption: str | None = None) -> str:
    """``df`` (one row per table row, in order) as an HTML table of ``columns`` (in that order) in a box that
    scrolls sideways when the table is wider than the page, with :data:`STYLE` in front.

    ``caption``: the table's accessible name (``aria-label``). Returns the HTML text. Raises KeyError when a
    column's ``name`` is not in ``df``; ValueError for a link that is not :func:`safe_href` or an unknown badge
    colour.
    """
    missing = [c.name for c in columns if c.name not in df.columns]
    if missing:
        raise KeyError(f"columns not in the frame: {missing}")
    head = "".join(
        f'<th class="{_classes(c)}" data-col="{html.escape(c.name)}"' +
        (f' title="{html.escape(c.help)}"' if c.help else "") +
        f">{html.escape(c.header)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(_cell(c, row) for c in columns) + "</tr>" for row in df.to_dict("records"))
    label = f' aria-label="{html.escape(caption)}"' if caption else ""
    return (f'{STYLE}<div class="{CLASS}"><table{label}><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>")


def fmt_int(v: Any) -> str:
    """A whole number with thousands separators (``1,234``); a float count is truncated by ``int``."""
    return f"{int(v):,}"


def fmt_percent(decimals: int = 2) -> Callable[[Any], str]:
    """Formatter of a ratio (0..1) as a percentage with ``decimals`` decimals (``0.0034`` -> ``0.34%``)."""
    return lambda v: f"{float(v) * 100:.{decimals}f}%"


def _fmt_float(v: Any) -> str:
    return f"{float(v):,.2f}"


def _fmt_time(v: Any) -> str:
    return pd.Timestamp(v).strftime("%Y-%m-%d %H:%M:%S")


def frame_columns(df: pd.DataFrame, overrides: Mapping[str, Column] | None = None) -> list[Column]:
    """A :class:`Column` for every column of ``df`` (in order), ``overrides`` (column name -> Column) first: an id
    column (``dashboard.links.ID_FIELDS``) shows the id as a link into the Events explorer, integers with thousands
    separators, other numbers with two decimals (right-aligned), datetimes (naive UTC) to the second, anything
    else as text; the header is the column's name."""
    from dashboard import links

    out = []
    for name in df.columns:
        if overrides and name in overrides:
            out.append(overrides[name])
        elif name in links.ID_FIELDS:
            field = links.ID_FIELDS[name]
            out.append(Column(name, name, link=lambda row, n=name, f=field: links.explorer_url(f, row[n]),
                              help=f"Opens the Events explorer on this {field.lower()}."))
        elif pd.api.types.is_bool_dtype(df[name]):
            out.append(Column(name, name))
        elif pd.api.types.is_integer_dtype(df[name]):
            out.append(Column(name, name, fmt_int, "right"))
        elif pd.api.types.is_numeric_dtype(df[name]):
            out.append(Column(name, name, _fmt_float, "right"))
        elif pd.api.types.is_datetime64_any_dtype(df[name]):
            out.append(Column(name, name, _fmt_time))
        else:
            out.append(Column(name, name))
    return out


def show(df: pd.DataFrame, columns: Sequence[Column], *, key: str, caption: str | None = None) -> None:
    """Draw :func:`html_table` of ``df`` in a container keyed ``table-<key>`` (CSS class ``st-key-table-<key>``,
    as ``ui.table`` keys a grid). The dashboard's one ``st.html`` call: its body is always :func:`html_table`."""
    with st.container(key=f"table-{key}"):
        st.html(html_table(df, columns, caption=caption))


def show_frame(df: pd.DataFrame, key: str, overrides: Mapping[str, Column] | None = None) -> None:
    """:func:`show` of every column of ``df`` (:func:`frame_columns`, ``overrides`` by column name; an override of
    a column ``df`` has not is ignored): the small tables of the pages (breakdowns, top offenders, per log group)."""
    show(df, frame_columns(df, overrides), key=key)
