"""``idemwatch init --from TEMPLATE|cdk.out|FILE.tf.json [--out stack.yaml]``.

Exit codes: 0 the config was written (TODOs included: they are part of the result, named on the notice line);
2 the source or the existing config cannot be read (one ``Error:`` line; the existing file is left untouched).
The notice (stderr, one line) says what was written, how many TODOs remain, which values of the file differ from
the template (kept), and whether the config loads yet.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import click

from idemwatch.errors import InputError
from idemwatch.terminal import echo

if TYPE_CHECKING:
    from alarms.stack_init import Derived, Merge

_SHOWN = 3  # items named on the notice line before "..."


@click.command("init")
@click.option("--from", "source_path", required=True, type=click.Path(exists=True, path_type=Path),
              help="A CloudFormation/SAM template (JSON or YAML), a Terraform JSON file, or a CDK cloud assembly "
                   "folder (cdk.out).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=Path("stack.yaml"),
              show_default=True, help="The stack config to write; an existing one is merged (your edits kept).")
@click.option("--stack", default=None, help="The stack of a cloud assembly with several.")
def init(source_path: Path, out: Path, stack: str | None) -> None:
    """Write the alarms stack config (functions, operations, event sources, queues, DLQs, idempotency table) from
    the IaC you already have; re-run it after template changes to merge them in."""
    from alarms.audit.exceptions import AuditError
    from alarms.stack_init import derive, merge_config, read_source

    try:
        source = read_source(source_path, stack)
    except AuditError as exc:
        raise InputError(str(exc)) from None
    derived = derive(source.inventory, stack=source.stack, region=source.region, account_id=source.account_id)
    if not derived.functions and not out.exists():
        raise InputError(f"{source_path}: no function to monitor (nothing invokes a Lambda function in it)")
    existing = None
    if out.exists():
        try:
            existing = out.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"{out}: cannot read the existing config ({exc})") from None
    try:
        merged = merge_config(derived, existing, str(source_path))
    except ValueError as exc:
        raise InputError(f"{out}: {exc} (left unchanged)") from None
    _write(out, merged.text)
    echo(_notice(out, source_path, existing is not None, derived, merged), err=True)


def _write(path: Path, text: str) -> None:
    """Replace ``path`` atomically (a crash leaves the old file or the new one, never half of one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _some(items: list[str]) -> str:
    return "; ".join(items[:_SHOWN]) + ("; ..." if len(items) > _SHOWN else "")


def _notice(out: Path, source: Path, merged: bool, derived: Derived, m: Merge) -> str:
    import yaml

    from alarms.config import parse_config
    from alarms.exceptions import ConfigError

    parts = [f"idemwatch init: {'merged into' if merged else 'wrote'} {out} from {source}:"
             f" {len(derived.functions)} function(s)" + (f", {len(m.added)} new" if merged else "")]
    if m.kept:
        parts.append(f"{len(m.kept)} kept that the template lacks ({_some(m.kept)})")
    if m.differs:
        parts.append(f"{len(m.differs)} value(s) of yours differ from the template, kept ({_some(m.differs)})")
    if m.todos:
        parts.append(f"{len(m.todos)} TODO(s) to resolve by hand ({_some(m.todos)})")
    try:
        parse_config(yaml.safe_load(m.text))
    except ConfigError as exc:
        parts.append(f"the config does not load yet: {exc}")
    except yaml.YAMLError:  # pragma: no cover - ruamel wrote it
        parts.append("the config does not load yet")
    return "; ".join(parts)
