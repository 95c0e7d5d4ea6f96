"""The one error handler of ``idemwatch``: every way a command can fail becomes one ``Error:`` line and an exit code.

Exit codes (docs/cli.md): 0 success; 1 a failure (an AWS call, a collection, a check that failed, an internal
error); 2 bad usage or input (click's convention: an unknown option, a bad value, a file or template that cannot
be read). Commands raise click exceptions (``click.ClickException`` exit 1, ``click.UsageError`` /
``click.BadParameter`` exit 2, :class:`InputError` exit 2 for bad input files) and never print ``Error:`` or call
``sys.exit`` themselves. No traceback unless ``-vv``. The message goes through the terminal sanitiser: it may quote
a name from a template, a log or an account.
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Callable, Sequence
from typing import Any

import click

from idemwatch.extras import PARTS
from idemwatch.terminal import safe

__all__ = ["InputError", "run"]


class InputError(click.ClickException):
    """Bad input that is not an option's value (a malformed template, a log file that is not a log, a query that
    does not parse), or for ``audit`` anything that keeps it from running (its exit code 1 means a check failed):
    one ``Error:`` line, exit code 2, without the ``--help`` hint of a usage error."""

    exit_code = 2


def run(invoke: Callable[[list[str] | None], Any], args: Sequence[str] | None = None, *,
        missing_extra: Callable[[str], str | None] = lambda module: None,
        verbose: Callable[[], int] = lambda: 0) -> int:
    """Run ``invoke(args)`` (a click command's ``main`` with ``standalone_mode=False``) and turn every way it can
    fail into one ``Error:`` line on stderr and an exit code (returned).

    ``missing_extra(module)`` gives the line naming the extra of the command being run when ``module`` (not one of
    this distribution's) cannot be imported, or None; ``verbose()`` is the ``-v`` count (2+ prints the traceback of
    an unexpected error)."""
    try:
        rv = invoke(list(args) if args is not None else None)
    except _NO_ARGS_IS_HELP as exc:  # a bare group (`idemwatch`, `idemwatch alarms`): its help, as click shows it
        exc.show()
        return exc.exit_code
    except click.UsageError as exc:  # BadParameter, MissingParameter, NoSuchOption, ...
        hint = f" (see '{' '.join(['idemwatch', *_path(exc.ctx)])} --help')" if exc.ctx is not None else ""
        return _error(_one_line(exc.format_message()) + hint, 2)
    except click.ClickException as exc:
        return _error(_one_line(exc.format_message()), exc.exit_code)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.Abort:
        return _error("aborted", 1)
    except KeyboardInterrupt:
        return _error("interrupted", 130)
    except BrokenPipeError:  # `idemwatch query ... | head`
        return 0
    except SystemExit as exc:  # a library that exits by itself
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else _error(str(exc.code), 1))
    except ModuleNotFoundError as exc:
        message = missing_extra(exc.name) if exc.name and exc.name.split(".")[0] not in PARTS else None
        return _error(message, 1) if message else _unexpected(exc, verbose())
    except Exception as exc:  # noqa: BLE001 - the one place that turns failures into one line
        if type(exc).__module__.split(".")[0] in ("botocore", "boto3"):
            return _error(f"AWS: {_one_line(str(exc))}", 1)
        if isinstance(exc, OSError) and exc.filename is not None:
            return _error(f"{exc.strerror or exc}: {exc.filename}", 1)
        return _unexpected(exc, verbose())
    return rv if isinstance(rv, int) else 0


_NO_ARGS_IS_HELP: type[click.UsageError] = getattr(click.exceptions, "NoArgsIsHelpError",
                                                   type("_Never", (click.UsageError,), {}))
"""click >= 8.2 raises it for a group called without a command; older versions print the help themselves."""


def _path(ctx: click.Context | None) -> list[str]:
    names = []
    while ctx is not None and ctx.parent is not None:
        names.append(ctx.info_name or "")
        ctx = ctx.parent
    return list(reversed(names))


def _one_line(text: str) -> str:
    return " ".join(part.strip() for part in text.strip().splitlines() if part.strip())


def _error(message: str, code: int) -> int:
    click.echo(f"Error: {safe(message)}", err=True)
    return code


def _unexpected(exc: BaseException, verbose: int) -> int:
    if verbose >= 2:
        traceback.print_exception(exc, file=sys.stderr)
    tail = "" if verbose >= 2 else " (run with -vv for the traceback)"
    return _error(f"internal error: {type(exc).__name__}: {_one_line(str(exc))}{tail}", 1)
