"""Read a server-drawn chart (``dashboard.htmlchart``, an ``st.html`` block) back from an AppTest run with the
standard library's parser: independent of the module that wrote it."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import NamedTuple

import pandas as pd


class Drawn(NamedTuple):
    """What the chart shows: ``meta`` (the box's ``data-*`` attributes), ``rows`` (one per series and bin, and per
    statistic of a stat chart: ``series`` (its legend name), ``t``, ``t_end``, ``value``, ``statistic`` (its label, None
    outside a stat chart), ``points`` (the points column's value, None without one), and its bin column's ``tip``
    (tooltip text), ``style`` and ``bar`` (the stacked bar's style, None for lines)), ``legend`` (name -> swatch colour, in order), ``legend_title``,
    ``y_labels`` / ``x_labels`` (tick texts), ``lines`` (the line images' ``src``) and every tag seen."""

    meta: dict[str, str]
    rows: pd.DataFrame
    legend: dict[str, str]
    legend_title: str
    y_labels: list[str]
    x_labels: list[str]
    lines: list[str]
    tags: list[tuple[str, dict[str, str | None]]]


class _Parser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.meta: dict[str, str] = {}
        self.marks: list[dict] = []
        self.legend: dict[str, str] = {}
        self.legend_title = ""
        self.y: list[str] = []
        self.x: list[str] = []
        self.lines: list[str] = []
        self._text: list[str] | None = None
        self._where: str | None = None
        self._swatch: str | None = None
        self._in_legend = False
        self._tip: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a))
        cls = (a.get("class") or "").split()
        if "idw-chart" in cls and tag == "div":
            self.meta = {k[5:]: v or "" for k, v in a.items() if k.startswith("data-")}
        elif "m" in cls:
            self.marks.append({"s": [int(i) for i in (a.get("data-s") or "").split()], "t": float(a["data-t"]),
                               "t_end": float(a["data-t-end"]), "v": [float(v) for v in (a.get("data-v") or "").split()],
                               "k": [int(i) for i in (a.get("data-k") or "").split()],
                               "p": [float(v) for v in (a.get("data-p") or "").split()],
                               "tip": "", "style": a.get("style"), "bar": None})
        elif "bar" in cls and self.marks:
            self.marks[-1]["bar"] = a.get("style")
        elif "tip" in cls:
            self._tip = []
        elif "legend" in cls:
            self._in_legend = True
        elif tag == "img" and "ln" in cls:
            self.lines.append(a["src"] or "")
        elif tag == "i" and self._in_legend:
            self._swatch = re.sub(r"^background:", "", a.get("style") or "")
        elif tag == "b" and self._in_legend:
            self._text, self._where = [], "legend_title"
        elif tag == "span" and self._in_legend:
            self._text, self._where = [], "legend"
        elif tag == "span" and ("yl" in cls or "xl" in cls):
            self._text, self._where = [], "yl" if "yl" in cls else "xl"

    def handle_endtag(self, tag):
        if self._tip is not None and tag == "span":
            self.marks[-1]["tip"] = "".join(self._tip)
            self._tip = None
            return
        if self._text is None or tag not in ("span", "b"):
            return
        text = "".join(self._text)
        if self._where == "legend":
            self.legend[text] = self._swatch or ""
        elif self._where == "legend_title":
            self.legend_title = text
        else:
            (self.y if self._where == "yl" else self.x).append(text)
        self._text = self._where = None

    def handle_data(self, data):
        if self._tip is not None:
            self._tip.append(data)
        elif self._text is not None:
            self._text.append(data)


def body(at, key: str) -> str:
    """The HTML of the one ``st.html`` block inside the container keyed ``key``."""
    block = at.get_by_key(key)
    bodies = [c.value for c in block.children.values() if getattr(c, "type", None) == "html"]
    assert len(bodies) == 1, [getattr(c, "type", None) for c in block.children.values()]
    return bodies[0]


def parse(markup: str) -> Drawn:
    p = _Parser()
    p.feed(markup)
    p.close()
    names = list(p.legend)
    stats = p.meta.get("stats", "").split()
    cols = ["series", "t", "t_end", "value", "tip", "style", "bar", "statistic", "points"]
    rows = pd.DataFrame([{"series": names[i], "t": m["t"], "t_end": m["t_end"], "value": v, "tip": m["tip"],
                          "style": m["style"], "bar": m["bar"],
                          "statistic": stats[m["k"][j]] if m["k"] else None,
                          "points": m["p"][j] if m["p"] else None}
                         for m in p.marks for j, (i, v) in enumerate(zip(m["s"], m["v"]))], columns=cols)
    return Drawn(p.meta, rows, p.legend, p.legend_title, p.y, p.x, p.lines, p.tags)


def read(at, key: str) -> Drawn:
    """:func:`parse` of the chart in the container keyed ``key``."""
    return parse(body(at, key))


def series(rows: pd.DataFrame, value: str = "value", statistic: str | None = None) -> dict[str, list]:
    """Series name -> its values in time order (of one ``statistic`` of a stat chart)."""
    if statistic is not None:
        rows = rows[rows["statistic"] == statistic]
    rows = rows.sort_values("t")
    return {str(name): g[value].tolist() for name, g in rows.groupby("series", sort=True)}
