"""Read an HTML table back (the Overview's health table, ``st.html``) with the standard library's parser:
independent of ``dashboard.htmltable``, which wrote it."""

from __future__ import annotations

from html.parser import HTMLParser

import pandas as pd


class TableParser(HTMLParser):
    """Collects every tag (with its attributes), the header cells, and per row the cell texts and link targets."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.headers: list[str] = []
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


def read(at, key: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(cell texts, link targets) of the HTML table in the container keyed ``table-<key>``: one frame row per table
    row, one column per header (the header text); a cell without a link has None."""
    block = at.get_by_key(f"table-{key}")
    bodies = [c.value for c in block.children.values() if getattr(c, "type", None) == "html"]
    assert len(bodies) == 1, [getattr(c, "type", None) for c in block.children.values()]
    p = parse(bodies[0])
    return pd.DataFrame(p.rows, columns=p.headers), pd.DataFrame(p.hrefs, columns=p.headers, dtype=object)
