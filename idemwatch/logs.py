"""Logging for ``idemwatch`` commands: configured once by the root ``--verbose``/``--quiet``; notes and warnings go
to stderr as ``note: ...`` / ``warning: ...``, through the terminal sanitiser (a message may quote a file or log
group name)."""

from __future__ import annotations

import logging
import sys
from typing import Any

from idemwatch.extras import PARTS
from idemwatch.terminal import safe

__all__ = ["configure_logging"]


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is at emit time (click's CliRunner swaps it per invocation)."""

    @property
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, value: Any) -> None:
        pass


class _Formatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        label = {"WARNING": "note" if record.name.startswith("idemwatch") else "warning"}.get(
            record.levelname, record.levelname.lower())
        text = f"{label}: {record.getMessage()}"
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        return safe(text, newlines=True)


def configure_logging(verbose: int, quiet: bool) -> None:
    """Configure logging once for this process: stderr, ``note:``/``warning:``/``info:`` prefixes.

    Levels for this project's loggers (``idemwatch``, ``collector``, ``dashboard``, ``alarms``, ``emitter``):
    WARNING by default, INFO with ``-v``, DEBUG with ``-vv`` (which also shows other libraries' INFO, and
    tracebacks); ``--quiet`` shows errors only. Repeated calls replace the handler rather than adding one."""
    level = logging.ERROR if quiet else {0: logging.WARNING, 1: logging.INFO}.get(verbose, logging.DEBUG)
    handler = _StderrHandler()
    handler.setFormatter(_Formatter())
    root = logging.getLogger()
    for h in list(root.handlers):
        if getattr(h, "_idemwatch", False):
            root.removeHandler(h)
    handler._idemwatch = True  # type: ignore[attr-defined]
    others = logging.ERROR if quiet else (logging.INFO if verbose >= 2 else logging.WARNING)

    def _level_for(record: logging.LogRecord) -> bool:
        # Other libraries' loggers may set their own level (werkzeug sets INFO on itself): the handler, not
        # the root level, decides what reaches stderr, so an in-process server's access log never mixes into
        # a command's output.
        mine = record.name.split(".", 1)[0] in PARTS
        return record.levelno >= (level if mine else others)

    handler.addFilter(_level_for)
    root.addHandler(handler)
    root.setLevel(min(level, others))
    for name in PARTS:
        logging.getLogger(name).setLevel(level)
