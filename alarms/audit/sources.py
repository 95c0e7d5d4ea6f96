"""Glue between the sources and the engine: read template files (format detected per file) into one Inventory,
and derive the rule options and idempotency tables from the alarms stack config."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from alarms.audit.exceptions import MalformedTemplateError, TemplateError
from alarms.audit.loading import load_template, read_text
from alarms.audit.model import Inventory
from alarms.audit.rules import AuditOptions
from alarms.audit.static_cfn import is_cloudformation, read_cfn
from alarms.audit.static_tf import is_terraform, read_tf
from alarms.catalogue import build_catalogue

__all__ = ["audit_paths", "merge", "options_from_config", "with_config_tables"]


def read_path(path: Path) -> Inventory:
    """One template file -> Inventory: Terraform JSON when it has a ``resource`` block, CloudFormation/SAM when
    it has ``Resources``. Raises :class:`TemplateError` (unreadable) or :class:`MalformedTemplateError` (not a
    template, or a malformed one: one line naming the file, the path inside it and the problem)."""
    doc = load_template(path, read_text(path))
    if is_terraform(doc):
        return read_tf(path, doc)
    if is_cloudformation(doc):
        return read_cfn(path, doc)
    raise MalformedTemplateError("neither a CloudFormation/SAM template (Resources) nor Terraform JSON (resource)",
                                 str(path))


def merge(parts: Sequence[Inventory]) -> Inventory:
    """Several inventories as one (e.g. the stack template plus the exported alarm template)."""
    if not parts:
        raise TemplateError("no template given")
    return Inventory(
        source=", ".join(p.source for p in parts),
        functions=sum((p.functions for p in parts), ()), mappings=sum((p.mappings for p in parts), ()),
        queues=sum((p.queues for p in parts), ()), tables=sum((p.tables for p in parts), ()),
        alarms=sum((p.alarms for p in parts), ()),
        idempotency_tables=frozenset().union(*(p.idempotency_tables for p in parts)),
        alarms_known=any(p.alarms_known for p in parts), expected=sum((p.expected for p in parts), ()))


def audit_paths(paths: Iterable[Path]) -> Inventory:
    """Read and merge template files (see :func:`read_path`)."""
    return merge([read_path(Path(p)) for p in paths])


def with_config_tables(inv: Inventory, tables: Iterable[str]) -> Inventory:
    """Also treat these tables (``idempotency_table`` of the stack config, ``--table``) as idempotency tables,
    when the inventory has them."""
    names = {t.name for t in inv.tables}
    extra = {t for t in tables if t in names}
    return replace(inv, idempotency_tables=inv.idempotency_tables | extra) if extra else inv


def options_from_config(config: Any | None, **kw: Any) -> AuditOptions:
    """AuditOptions with ``expected_alarms`` from the idemwatch catalogue of ``config`` (an
    ``alarms.config.StackConfig``): per function, the catalogue alarms whose target is the function, its source
    queue or its DLQ."""
    if config is None:
        return AuditOptions(**kw)
    defs = build_catalogue(config)
    expected = {fn.name: tuple(d.name for d in defs if d.target in {fn.name, fn.queue, fn.dlq} - {None})
                for fn in config.functions}
    return AuditOptions(expected_alarms=expected, **kw)
