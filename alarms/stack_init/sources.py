"""What ``idemwatch init --from`` reads: a template file (CloudFormation/SAM JSON or YAML, Terraform JSON) or a
CDK cloud assembly (the ``cdk.out`` folder ``cdk synth`` writes).

A cloud assembly's ``manifest.json`` lists its stacks (artifacts of type ``aws:cloudformation:stack``) with their
template file and environment (``aws://<account>/<region>``, ``unknown-account`` / ``unknown-region`` when the
app leaves them open): the stack name and, when known, region and account id go into the config. Stacks of
nested stages (``cdk:cloud-assembly`` artifacts) are read from their own folder.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from alarms.audit.exceptions import TemplateError
from alarms.audit.model import Inventory
from alarms.audit.sources import read_path

__all__ = ["Source", "read_source"]

_STACK = "aws:cloudformation:stack"
_NESTED = "cdk:cloud-assembly"


@dataclass(frozen=True)
class Source:
    """The inventory of one stack and what its source says beside the template (None when it does not)."""

    inventory: Inventory
    path: Path
    stack: str | None = None
    region: str | None = None
    account_id: str | None = None


def read_source(path: Path, stack: str | None = None) -> Source:
    """Read ``path``: a cloud assembly folder (``stack`` picks one of its stacks; required when it has several)
    or a template file. Raises :class:`~alarms.audit.exceptions.TemplateError` (unreadable, not a template,
    no such stack, several stacks and no ``stack``) and its subclass ``MalformedTemplateError``."""
    if path.is_dir():
        return _assembly(path, stack)
    if stack is not None:
        raise TemplateError("--stack applies to a cloud assembly folder (cdk.out), not to a template file", str(path))
    return Source(read_path(path), path)


def _stacks(folder: Path, depth: int = 0) -> list[tuple[str, Path, str]]:
    """(stack name, template path, environment) of every stack in the assembly at ``folder`` and its nested
    stages."""
    manifest = folder / "manifest.json"
    try:
        doc = json.loads(manifest.read_text(encoding="utf-8"))
    except OSError:
        raise TemplateError("not a CDK cloud assembly (no manifest.json): run `cdk synth` first, or give a "
                            "template file", str(folder)) from None
    except ValueError as exc:
        raise TemplateError(f"manifest.json is not JSON ({exc})", str(folder)) from None
    artifacts: Any = doc.get("artifacts") if isinstance(doc, dict) else None
    out: list[tuple[str, Path, str]] = []
    for artifact_id, art in (artifacts or {}).items() if isinstance(artifacts, dict) else ():
        if not isinstance(art, dict):
            continue
        props: dict[str, Any] = art["properties"] if isinstance(art.get("properties"), dict) else {}
        if art.get("type") == _STACK and isinstance(props.get("templateFile"), str):
            name = props.get("stackName") or art.get("displayName") or artifact_id
            out.append((str(name), folder / props["templateFile"], str(art.get("environment") or "")))
        elif art.get("type") == _NESTED and isinstance(props.get("directoryName"), str) and depth < 5:
            out.extend(_stacks(folder / props["directoryName"], depth + 1))
    return out


def _assembly(folder: Path, stack: str | None) -> Source:
    stacks = _stacks(folder)
    if not stacks:
        raise TemplateError("the cloud assembly has no stack", str(folder))
    names = [s[0] for s in stacks]
    if stack is None and len(stacks) > 1:
        raise TemplateError(f"the cloud assembly has {len(stacks)} stacks ({', '.join(names)}): pick one with "
                            "--stack (a stack config describes one stack)", str(folder))
    chosen = stacks[0] if stack is None else next((s for s in stacks if s[0] == stack), None)
    if chosen is None:
        raise TemplateError(f"no stack {stack!r} in the cloud assembly (stacks: {', '.join(names)})", str(folder))
    name, template, environment = chosen
    region = account = None
    if environment.startswith("aws://"):
        parts = environment[len("aws://"):].split("/")
        if len(parts) == 2:
            account = parts[0] if parts[0].isdigit() and len(parts[0]) == 12 else None
            region = parts[1] if parts[1] and not parts[1].startswith("unknown-") else None
    return Source(read_path(template), template, name, region, account)
