"""Writing the proposal into a stack config file, and merging it into one that exists, without losing edits.

The file is read and written with ruamel.yaml's round-trip mode, which keeps comments, key order, quoting and
flow style (PyYAML drops comments, so a re-run would erase the team's notes). Merge rules, so that a re-run never
overwrites what a person wrote:

- a key the file has keeps its value; when the template says otherwise the difference is reported (delete the key
  to take the template's value on the next run);
- a key the file lacks is added where init would write it (top-level settings in their order, function keys
  after the key before them), with init's note as an end-of-line comment;
- a function is matched by ``name``; a new one is appended with its notes and TODO comments; one the template no
  longer has is kept and reported;
- everything else (thresholds, overrides, suppressions, actions, tags, custom alarms, comments) is left as it is;
  when nothing is added, the file's text is kept byte for byte.

TODO comments are written on what init adds; a TODO about an entry that already exists is reported on the
command's notice line only (the file may carry the one from the first run).
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import YAMLError
from ruamel.yaml.representer import RoundTripRepresenter
from ruamel.yaml.scalarfloat import ScalarFloat
from ruamel.yaml.scalarstring import DoubleQuotedScalarString

from alarms.stack_init.derive import FUNCTION_KEYS, Derived, DerivedFunction, Todo

__all__ = ["Merge", "merge_config"]

_SETTING_ORDER = ("stack", "service", "namespace", "region", "account_id", "idempotency_table")
_QUOTED = {"account_id"}  # digits that YAML would read as a number (the config requires a string)


@dataclass
class Merge:
    """The merged file text and what happened: functions ``added`` (names), ``kept`` (in the file, not in the
    template), ``differs`` (``where``: file value kept over template value), ``todos`` (``where: reason``)."""

    text: str
    added: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    differs: list[str] = field(default_factory=list)
    todos: list[str] = field(default_factory=list)


class _Representer(RoundTripRepresenter):
    """ruamel.yaml's round-trip representer, except that a float is never written as another number: its
    re-formatting of an exponent form cuts the mantissa (``4.732056523602975e+17`` came back ``...974e+17``,
    ruamel.yaml 0.19); such a value is written as Python's shortest repr instead (with a dot, which YAML 1.1
    readers such as the config loader need to read it as a float)."""

    def represent_scalar_float(self, data: Any) -> Any:
        node = super().represent_scalar_float(data)
        try:
            same = float(node.value) == float(data)
        except ValueError:  # .nan, .inf
            same = True
        if not same:
            text = repr(float(data))
            mantissa, e, exponent = text.partition("e")
            node.value = (mantissa if "." in mantissa else mantissa + ".0") + e + exponent
        return node


_Representer.add_representer(ScalarFloat, _Representer.represent_scalar_float)


def _yaml() -> YAML:
    y = YAML()  # round-trip
    y.Representer = _Representer
    y.preserve_quotes = True
    y.indent(mapping=2, sequence=4, offset=2)
    y.width = 4096  # never fold a long value or description onto a second line
    return y


def merge_config(derived: Derived, existing: str | None, source: str) -> Merge:
    """The stack config text for ``derived``, merged into ``existing`` (the file's text; None: a new file).
    ``source`` names what was read (in the new file's header). Raises ``ValueError`` when ``existing`` is not
    YAML or not a mapping with a ``functions`` list (the file is then left alone)."""
    y = _yaml()
    new = existing is None or not existing.strip()
    if new:
        doc = CommentedMap()
    else:
        try:
            doc = y.load(existing)
        except YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
            raise ValueError(f"not valid YAML{where}: {getattr(exc, 'problem', None) or 'syntax error'}") from None
        if doc is None:
            doc, new = CommentedMap(), True
        elif not isinstance(doc, CommentedMap):
            raise ValueError("not a stack config (the top level must be a mapping)")
    out = Merge(text="")
    _merge_keys(doc, _SETTING_ORDER, derived.settings, derived.notes, out, "")
    functions = doc.get("functions")
    if functions is None:
        functions = CommentedSeq()
        doc["functions"] = functions
    elif not isinstance(functions, CommentedSeq):
        raise ValueError("not a stack config (functions must be a list)")
    by_name = {f.get("name"): f for f in functions if isinstance(f, CommentedMap)}
    derived_names = set()
    for i, fn in enumerate(derived.functions):
        name = fn.values["name"]
        derived_names.add(name)
        entry = by_name.get(name)
        if entry is None:
            functions.append(_new_function(fn))
            out.added.append(name)
            out.todos.extend(f"{name}.{t.key}: {t.reason}" for t in fn.todos)
        else:
            _merge_function(entry, fn, out)
    out.kept = [str(n) for n in by_name if n not in derived_names]
    out.todos[:0] = [f"{t.key}: {t.reason}" for t in derived.todos]
    if new:
        doc.yaml_set_start_comment(_header(derived, source))
    out.text = _dump(y, doc)
    if existing is not None and not new and out.text == _dump(y, y.load(existing)):
        # nothing merged in: the file stays byte for byte as written (ruamel.yaml re-flows what a person or another
        # tool folded, e.g. a long flow list over two lines, even when no value changes)
        out.text = existing
    return out


def _dump(y: YAML, doc: Any) -> str:
    buf = io.StringIO()
    y.dump(doc, buf)
    return buf.getvalue()


def _header(derived: Derived, source: str) -> str:
    lines = [(f"Stack config written by `idemwatch init --from {source}` (re-run it to merge template changes: "
              "your edits, values and comments are kept)."),
             ("Thresholds, actions, tags, overrides and suppressions: docs/alarms.md. Export: "
              "idemwatch alarms export --config <this file> --out exported --format all")]
    if any("operation" in f.notes for f in derived.functions):
        lines.append("operation 'the handler's name': the emitter's default Operation (@em.handler without "
                     "operation=); if the code names another, write it here or tag the function "
                     "idemwatch:operation=<name> in the template")
    lines += [t.comment() for t in derived.todos]
    if derived.skipped:
        lines.append("Not monitored (nothing invokes them and they carry no idemwatch/Powertools setting): "
                     + ", ".join(derived.skipped))
    return "\n".join(lines)


def _value(key: str, value: str) -> Any:
    return DoubleQuotedScalarString(value) if key in _QUOTED else value


def _merge_keys(target: CommentedMap, order: tuple[str, ...], values: dict[str, str], notes: dict[str, str],
                out: Merge, where: str) -> None:
    """Add each of ``values`` that ``target`` lacks after the key before it in ``order`` (with its note as an
    end-of-line comment); a key ``target`` has keeps its value, a different one is reported in ``out``."""
    for key in order:
        if key not in values:
            continue
        value = values[key]
        if key in target:
            if str(target[key]) != value:
                out.differs.append(f"{where}{key} (file: {target[key]}, template: {value})")
            continue
        before = [k for k in order[:order.index(key)] if k in target]
        pos = list(target).index(before[-1]) + 1 if before else 0
        target.insert(pos, key, _value(key, value))
        if key in notes:
            target.yaml_add_eol_comment(notes[key], key)


def _new_function(fn: DerivedFunction) -> CommentedMap:
    entry = CommentedMap()
    for key in FUNCTION_KEYS:
        if key in fn.values:
            entry[key] = fn.values[key]
    for key, note in fn.notes.items():
        if key in entry:
            entry.yaml_add_eol_comment(note, key)
    _todo_comments(entry, fn.todos)
    return entry


def _todo_comments(entry: CommentedMap, todos: list[Todo]) -> None:
    """Each TODO as a comment line where its key would go: before the next key written, else at the end of the
    last line."""
    keys = list(entry)
    trailing = []
    for todo in todos:
        later = FUNCTION_KEYS[FUNCTION_KEYS.index(todo.key) + 1:] if todo.key in FUNCTION_KEYS else ()
        nxt = next((k for k in later if k in entry), None)
        if nxt is None:
            trailing.append(todo.comment())
        else:
            entry.yaml_set_comment_before_after_key(nxt, before=todo.comment(), indent=4)
    if trailing:
        entry.yaml_add_eol_comment(" | ".join(trailing), keys[-1])


def _merge_function(entry: CommentedMap, fn: DerivedFunction, out: Merge) -> None:
    name = fn.values["name"]
    _merge_keys(entry, FUNCTION_KEYS, fn.values, fn.notes, out, f"{name}.")
    out.todos.extend(f"{name}.{t.key}: {t.reason}" for t in fn.todos if t.key not in entry)
