"""What the engine knows about each Logs Insights command: supported or not, why, and where AWS documents it.

The parser's and the compiler's dispatch tables cover exactly :data:`SUPPORTED_COMMANDS`
(a test checks it); every command in :data:`UNSUPPORTED_COMMANDS` is refused with one line
naming it and the reason, never a syntax error. The coverage page
(``docs/logs-insights-coverage.md``) is generated from this table and the function registry.
"""

from __future__ import annotations

from dataclasses import dataclass

from collector.insights.constants import DOCS

__all__ = ["SUBQUERY", "SUPPORTED_COMMANDS", "UNSUPPORTED_COMMANDS", "UNSUPPORTED_FUNCTIONS", "CommandInfo",
           "FunctionGap"]


@dataclass(frozen=True)
class CommandInfo:
    """One Logs Insights command: canonical name, AWS page (relative to constants.DOCS), notes."""

    name: str  # canonical spelling, as documented
    page: str  # doc page under DOCS
    notes: str  # offline semantics (supported) or the reason it is refused (unsupported)

    @property
    def url(self) -> str:
        return DOCS + self.page


SUPPORTED_COMMANDS: dict[str, CommandInfo] = {c.name.lower(): c for c in (
    CommandInfo("fields", "CWL_QuerySyntax-Fields.html", "expressions and `as` aliases; fields stay visible to later commands"),
    CommandInfo("display", "CWL_QuerySyntax-Display.html", "the last `display` decides the result columns"),
    CommandInfo("filter", "CWL_QuerySyntax-Filter.html", "comparisons, `and`/`or`/`not`, `like`, `=~`, `in [...]`"),
    CommandInfo("filterIndex", "CWL_QuerySyntax-FilterIndex.html",
                "local data has no field index: filters the events with the same condition as `filter`"),
    CommandInfo("stats", "CWL_QuerySyntax-Stats.html",
                "aggregates `by` keys incl. `bin(period)`; aliases reusable later in the same `stats`; "
                "`offset <period>` after `by bin()`"),
    CommandInfo("sort", "CWL_QuerySyntax-Sort.html", "`sort [by] expr [asc|desc], ...`; documented natural order"),
    CommandInfo("limit", "CWL_QuerySyntax-Limit.html", "at most 10,000 rows"),
    CommandInfo("parse", "CWL_QuerySyntax-Parse.html", "glob `*` patterns with `as`, regex with `(?<name>...)` groups"),
    CommandInfo("dedup", "CWL_QuerySyntax-Dedup.html", "first event per key in the current order; events missing a key are kept"),
    CommandInfo("unnest", "CWL_QuerySyntax-Unnest.html",
                "one record per list element; a non-list value is a one-item list; a missing value or an empty "
                "list yields no record"),
    CommandInfo("unmask", "CWL_QuerySyntax-Unmask.html",
                "offline data is never masked: the command (and `unmask(field)`) returns the content unchanged"),
    CommandInfo("SOURCE", "CWL_QuerySyntax-Source.html",
                "`logGroups(namePrefix: [...], class: [...], accountIdentifiers: [...])` selects local log groups; "
                "every local group counts as class STANDARD (the documented default); `SOURCE '<log group>'` "
                "selects one group by its exact name (the form the join and subquery pages write)"),
    CommandInfo("join", "CWL_QuerySyntax-Join.html",
                "`join [type=inner|left] left=<a> right=<b> where <a>.<f> = <b>.<f> (<subquery>)`: rows whose keys "
                "have equal text; a row matching several right rows appears once per match (right rows in ingest "
                "order); `<alias>.<field>` reads any field of either side, a name without alias the left row; the "
                "subquery reads the same time window"),
)}

SUBQUERY = CommandInfo(
    "subquery", "CWL_QuerySyntax-Subqueries.html",
    "`filter <field> [not] in (<subquery>)`: true when the field's text equals one value of the subquery's result "
    "column of that name; the subquery reads the same time window and is not capped at 10,000 rows; a subquery "
    "inside a subquery is refused, as AWS supports no nested subqueries")
"""The subquery construct: not a command word, so not in the dispatch tables, but a row of the coverage page."""

UNSUPPORTED_COMMANDS: dict[str, CommandInfo] = {c.name.lower(): c for c in (
    CommandInfo("pattern", "CWL_QuerySyntax-Pattern.html",
                "AWS clusters messages with a model it does not publish; an offline clustering would not give AWS's "
                "patterns or @ratio values"),
    CommandInfo("diff", "CWL_QuerySyntax-Diff.html",
                "compares AWS's `pattern` clusters with the previous period; unavailable without `pattern`"),
    CommandInfo("anomaly", "CWL_QuerySyntax-Anomaly.html", "machine-learning anomaly detection that runs only in AWS"),
    CommandInfo("lookup", "CWL_QuerySyntax-Lookup.html", "needs a lookup table stored in CloudWatch Logs"),
    CommandInfo("addtotals", "CWL_QuerySyntax.html", "not implemented offline"),
)}


@dataclass(frozen=True)
class FunctionGap:
    """A documented function the engine refuses: name, AWS page, the reason given in the error."""

    name: str
    page: str
    reason: str

    @property
    def url(self) -> str:
        return DOCS + self.page


UNSUPPORTED_FUNCTIONS: dict[str, FunctionGap] = {f.name.lower(): f for f in (
    FunctionGap("rate", "CWL_QuerySyntax-timeseries-functions.html",
                "AWS does not define the rate's unit or how empty bins count"),
    FunctionGap("histogram", "CWL_QuerySyntax-timeseries-functions.html",
                "returns a map whose bucket bounds AWS does not define"),
)}
