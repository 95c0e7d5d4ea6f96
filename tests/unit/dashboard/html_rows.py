"""Read an HTML table back (the Overview's health table, ``st.html``) with the standard library's parser:
independent of ``dashboard.htmltable``, which wrote it."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pandas as pd


class TableParser(HTMLParser):
    """Collects every tag (with its attributes), the header cells, and per row the cell texts and link targets."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.headers: list[str] = []
        self.cols: list[str | None] = []  # each header's data-col (the frame's column name)
        self.rows: list[list[str]] = []
        self.hrefs: list[list[str | None]] = []
        self._cell: list[str] | None = None
        self._href: str | None = None
        self._in_style = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "style":
            self._in_style = True
        elif tag in ("td", "th"):
            self._cell, self._href = [], None
            if tag == "th":
                self.cols.append(dict(attrs).get("data-col"))
        elif tag == "a" and self._cell is not None:
            self._href = dict(attrs).get("href")

    def handle_endtag(self, tag):
        if tag == "style":
            self._in_style = False
        elif tag in ("td", "th") and self._cell is not None:
            text = "".join(self._cell)
            if tag == "th":
                self.headers.append(text)
            else:
                if not self.rows or len(self.rows[-1]) == len(self.headers):
                    self.rows.append([])
                    self.hrefs.append([])
                self.rows[-1].append(text)
                self.hrefs[-1].append(self._href)
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None and not self._in_style:
            self._cell.append(data)


def parse(body: str) -> TableParser:
    p = TableParser()
    p.feed(body)
    p.close()
    return p


_NUMBER = re.compile(r"-?[0-9][0-9,]*(\.[0-9]+)?%?")


def number(text: str):
    """A cell's text as the number it shows (``1,234`` -> 1234, ``2.50`` -> 2.5, ``5.00%`` -> 0.05), None for the
    empty-cell dash; other text unchanged."""
    if text == "–":
        return None
    if not _NUMBER.fullmatch(text):
        return text
    v = text.rstrip("%").replace(",", "")
    n = float(v) if "." in v else int(v)
    return n / 100 if text.endswith("%") else n


def _block(at, key: str) -> TableParser:
    block = at.get_by_key(f"table-{key}")
    bodies = [c.value for c in block.children.values() if getattr(c, "type", None) == "html"]
    assert len(bodies) == 1, [getattr(c, "type", None) for c in block.children.values()]
    return parse(bodies[0])


def is_html(at, key: str) -> bool:
    """True when the table keyed ``table-<key>`` is an HTML table (not a data grid)."""
    return any(getattr(c, "type", None) == "html" for c in at.get_by_key(f"table-{key}").children.values())


def read(at, key: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(cell texts, link targets) of the HTML table in the container keyed ``table-<key>``: one frame row per table
    row, one column per header (the header text); a cell without a link has None."""
    p = _block(at, key)
    return pd.DataFrame(p.rows, columns=p.headers), pd.DataFrame(p.hrefs, columns=p.headers, dtype=object)


def values(at, key: str) -> pd.DataFrame:
    """The HTML table keyed ``table-<key>`` as the grid gave it: the frame's column names (``data-col``), a linked
    cell as its link target, other cells as the number they show (:func:`number`) or their text."""
    p = _block(at, key)
    return pd.DataFrame([[h if h is not None else number(t) for t, h in zip(r, hr)] for r, hr in zip(p.rows, p.hrefs)],
                        columns=p.cols, dtype=object)


def labels(at, key: str) -> dict[str, str]:
    """Column name (``data-col``) -> header text of the HTML table keyed ``table-<key>``."""
    p = _block(at, key)
    return dict(zip(p.cols, p.headers))
