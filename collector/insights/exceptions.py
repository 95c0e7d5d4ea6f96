"""Errors raised by the Logs Insights engine."""

from __future__ import annotations

__all__ = ["QueryError", "line_column"]


def line_column(text: str, position: int) -> tuple[int, int]:
    """1-based (line, column) of the 0-based ``position`` in ``text``."""
    before = text[:position]
    return before.count("\n") + 1, position - (before.rfind("\n") + 1) + 1


class QueryError(ValueError):
    """A query that cannot be run: syntax error, unsupported command or function, bad argument.

    Attributes:
        message: what is wrong, naming the offending command/function/token.
        position: 0-based character offset into the query text (None when not tied to one place).
        line, column: 1-based line and column of ``position`` (None when unknown).

    ``str(err)`` is one line: ``"<message> (line L, column C)"``, suitable for a CLI exit message.
    """

    def __init__(self, message: str, position: int | None = None, query: str | None = None) -> None:
        self.message = message
        self.position = position
        self.line: int | None = None
        self.column: int | None = None
        if position is not None and query is not None:
            self.line, self.column = line_column(query, position)
        super().__init__(self._render())

    def _render(self) -> str:
        if self.line is not None:
            return f"{self.message} (line {self.line}, column {self.column})"
        if self.position is not None:
            return f"{self.message} (position {self.position})"
        return self.message

    def with_query(self, query: str) -> QueryError:
        """Return the same error with line/column computed against ``query``."""
        if self.line is None and self.position is not None:
            return QueryError(self.message, self.position, query)
        return self
