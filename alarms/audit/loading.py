"""Reading a template file into a document, and the shape checks every static reader uses.

One error type for malformed input (:class:`~alarms.audit.exceptions.MalformedTemplateError`): bytes that are not
UTF-8, text that is neither JSON nor YAML, nesting deeper than :data:`~alarms.audit.constants.MAX_TEMPLATE_DEPTH`
(checked once here, so no later walk of the document can exhaust the stack), a top level that is not a mapping,
and (through :func:`mapping`, :func:`sequence`, :func:`integer`) a value of the wrong shape where a reader needs a
mapping, a list or an integer. Each names the file, the path inside it and the problem, on one line.

YAML is read with PyYAML through a safe loader subclass (libyaml's C parser when available) that turns ``!Ref x``
into ``{"Ref": "x"}``, ``!GetAtt a.b`` into ``{"Fn::GetAtt": ["a", "b"]}`` and every other ``!Fn`` into
``{"Fn::Fn": ...}``, the long forms CloudFormation itself uses; YAML 1.1 timestamps stay strings
(``AWSTemplateFormatVersion: 2010-09-09``); aliases are refused.

Positions (:func:`key_positions`): the 1-based line and column of every mapping key, by its path in the document,
read from the YAML node tree (its marks). JSON is YAML's flow syntax, so JSON templates get their positions from
the same composer; text that composes differently (or not at all) simply has none, and the findings then carry
no line (the document itself is always decoded as above).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import yaml

from alarms.audit.constants import MAX_TEMPLATE_DEPTH
from alarms.audit.exceptions import MalformedTemplateError, TemplateError
from alarms.audit.model import UNKNOWN, is_unknown

__all__ = ["Position", "integer", "key_positions", "load_template", "mapping", "read_text", "sequence", "string"]

_BaseLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's parser when PyYAML was built with it


class _CfnLoader(_BaseLoader):
    """Safe loader + CloudFormation short-form tags; no implicit timestamps; no aliases (a nested alias "bomb"
    would make every later walk of the document exponential)."""

    def construct_object(self, node: Any, deep: bool = False) -> Any:
        # an alias is the same node constructed a second time
        if node in self.constructed_objects:
            raise yaml.YAMLError(f"YAML aliases are not accepted (line {node.start_mark.line + 1})")
        return super().construct_object(node, deep=deep)

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        # keys as CloudFormation reads them (a YAML template becomes JSON, whose keys are strings): 10 -> "10",
        # true -> "true"; built pair by pair, so 1 and true stay two keys
        self.flatten_mapping(node)
        out = {}
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=deep)
            if not isinstance(key, str):
                key = json.dumps(key) if key is None or isinstance(key, bool) else str(key)
            out[key] = self.construct_object(value_node, deep=deep)
        return out


_CfnLoader.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:timestamp"]
    for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _construct(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.ScalarNode):
        value: Any = loader.construct_scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)
    if suffix == "Ref":
        return {"Ref": value}
    if suffix == "Condition":
        return {"Condition": value}
    if suffix == "GetAtt" and isinstance(value, str):
        value = value.split(".", 1)
    return {f"Fn::{suffix}": value}


_CfnLoader.add_multi_constructor("!", _construct)


def read_text(path: Path) -> str:
    """The file's text (UTF-8, an optional byte-order mark dropped). Raises :class:`TemplateError` when the file
    cannot be read and :class:`MalformedTemplateError` when it is not UTF-8."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise TemplateError(f"cannot read ({exc.strerror})", str(path)) from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise MalformedTemplateError(f"not UTF-8 text: byte 0x{data[exc.start]:02x} at offset {exc.start}",
                                     str(path)) from None


def load_template(path: Path, text: str | None = None) -> dict[str, Any]:
    """Decode a JSON or YAML template (``text``: the file's text when already read). Raises
    :class:`MalformedTemplateError` (see the module docstring) or :class:`TemplateError` (unreadable file)."""
    if text is None:
        text = read_text(path)
    file = str(path)
    try:
        if text.lstrip().startswith("{"):
            data = json.loads(text, parse_constant=_no_constant)
        else:
            data = yaml.load(text, Loader=_CfnLoader)
    except RecursionError:
        raise MalformedTemplateError(f"nested deeper than {MAX_TEMPLATE_DEPTH} levels", file) from None
    except json.JSONDecodeError as exc:
        raise MalformedTemplateError(f"not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}",
                                     file) from None
    except ValueError as exc:  # NaN / Infinity
        raise MalformedTemplateError(f"not valid JSON: {exc}", file) from None
    except yaml.YAMLError as exc:
        # one line, position and problem (yaml's own message quotes the file's text over several lines)
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise MalformedTemplateError(f"not valid YAML{at}: {problem}", file) from None
    if not isinstance(data, dict):
        raise MalformedTemplateError(f"a template must be a mapping at the top level, got {_kind(data)}", file)
    _check_depth(data, file)
    return data


Position = tuple[int, int]
"""(line, column), both 1-based, of a key in a template file."""


def key_positions(text: str) -> dict[tuple[str | int, ...], Position]:
    """The position of every mapping key of a YAML or JSON template, by path: ``("Resources", "OrdersQueue")``
    -> ``(52, 3)`` (line 52, column 3: where the logical id starts, its quote for JSON). List items are int
    path parts (``("resource", 0, "aws_sqs_queue", "q")``). A key written twice has the position of the last
    one (the one the decoded document keeps). Empty when the text does not compose as YAML (the positions are
    for reports; the document's decoding is :func:`load_template`'s)."""
    try:
        root = yaml.compose(text, Loader=_CfnLoader)
    except (yaml.YAMLError, RecursionError, ValueError):
        return {}
    out: dict[tuple[str | int, ...], Position] = {}
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(root, ())] if root is not None else []
    seen: set[int] = set()  # an alias is the node it names again: walked once (no alias "bomb")
    while stack:
        node, path = stack.pop()
        if len(path) > MAX_TEMPLATE_DEPTH or id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                if not isinstance(key_node, yaml.ScalarNode):
                    continue
                here = (*path, key_node.value)
                out[here] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
                stack.append((value_node, here))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((item, (*path, i)) for i, item in enumerate(node.value))
    return out


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _check_depth(doc: Any, file: str) -> None:
    """Raise when a mapping or list lies deeper than MAX_TEMPLATE_DEPTH (walked without recursion)."""
    stack: list[tuple[Any, tuple[Any, ...]]] = [(doc, ())]
    while stack:
        node, path = stack.pop()
        if len(path) > MAX_TEMPLATE_DEPTH:
            raise MalformedTemplateError(f"nested deeper than {MAX_TEMPLATE_DEPTH} levels", file,
                                         _path(path[:8]) + ".(...)")
        if isinstance(node, dict):
            stack.extend((v, (*path, k)) for k, v in node.items() if isinstance(v, (dict, list)))
        elif isinstance(node, list):
            stack.extend((v, (*path, i)) for i, v in enumerate(node) if isinstance(v, (dict, list)))


def _path(parts: tuple[Any, ...]) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def _kind(value: Any) -> str:
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean", int: "a number",
            float: "a number", type(None): "null"}.get(type(value), type(value).__name__)


def mapping(value: Any, file: str, where: str) -> Any:
    """``value`` when it is a mapping or :data:`UNKNOWN`; ``{}`` for None (absent); else
    :class:`MalformedTemplateError` naming ``where``."""
    if value is None:
        return {}
    if isinstance(value, dict) or is_unknown(value):
        return value
    raise MalformedTemplateError(f"must be a mapping, got {_kind(value)}", file, where)


def sequence(value: Any, file: str, where: str) -> Any:
    """``value`` when it is a list or :data:`UNKNOWN`; ``[]`` for None; else :class:`MalformedTemplateError`."""
    if value is None:
        return []
    if isinstance(value, list) or is_unknown(value):
        return value
    raise MalformedTemplateError(f"must be a list, got {_kind(value)}", file, where)


def string(value: Any, file: str, where: str) -> Any:
    """``value`` when it is a string, None or :data:`UNKNOWN` (a name or an attribute), else
    :class:`MalformedTemplateError`."""
    if value is None or is_unknown(value) or isinstance(value, str):
        return value
    raise MalformedTemplateError(f"must be a string, got {_kind(value)}", file, where)


def integer(value: Any, file: str, where: str) -> Any:
    """A template number as int: an int, an integral float or a string of digits (``"30"``); None and
    :data:`UNKNOWN` pass through; a string that is no number is UNKNOWN (the value is decided elsewhere);
    a boolean, a non-integral or infinite number, a list or a mapping is a :class:`MalformedTemplateError`."""
    if value is None or is_unknown(value):
        return value
    if isinstance(value, bool):
        raise MalformedTemplateError(f"must be an integer, got {value!r}", file, where)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer():
            return int(value)
        raise MalformedTemplateError(f"must be an integer, got {value!r}", file, where)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return UNKNOWN
    raise MalformedTemplateError(f"must be an integer, got {_kind(value)}", file, where)
