"""Page state in the URL: every filter, the time range and each page's own choices as query parameters,
so a link shows what its sender saw and the browser's Back/Forward buttons step through filter changes.

One rerun, in order:

1. :func:`begin` (once, before any widget): decides who wins this run. The URL wins on a session's
   first run (a shared link, a reload) and whenever the query string differs from the one this session
   last wrote while no bound widget changed (Back/Forward, an edited URL); otherwise the widgets win (a
   click changed one, or the navigation opened another page, which clears or keeps the query string but
   never changes it). A widget change always wins: the browser sends the query string it has *now*, and
   a change made before it applied this session's last write arrives with the stale one (typing a second
   search right after the first was reset to the first by exactly that race). A run the browser's Back/Forward
   started (Streamlit marks it ``is_history_navigation``) takes the URL even when its query string is empty:
   Back to a page opened without parameters returns every widget to its default.
2. :func:`bind` (before each widget): when the URL wins, the widget's session-state value is set from
   its parameter (a missing parameter means the widget's default); the value is then checked against
   what the widget accepts now (``valid``), so a stale or hostile URL never raises.
3. :func:`publish` (the page footer): writes every bound widget's value back; Streamlit pushes a
   history entry when the query string changes.

Query parameters are user input: decoders accept only what the widget would offer.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

__all__ = ["INVALID", "begin", "bind", "params", "publish"]

INVALID = object()
"""What a decoder or validator returns for a value the widget cannot take (the default is used)."""
_LAST = "_idemwatch_url_last"  # the query string (name -> values) this session last wrote
_WINS = "_idemwatch_url_wins"
_BOUND = "_idemwatch_url_bound"  # name -> (session key, encoder), for this run
_SHOWN = "_idemwatch_url_shown"  # session key -> the value each bound widget had at the last publish
Encoded = list[str]


def _current() -> dict[str, Encoded]:
    qp = st.query_params
    return {k: [str(v) for v in qp.get_all(k)] for k in qp}


def begin() -> None:
    """Start a rerun: decide whether the URL or the widgets win (see the module docstring)."""
    ss = st.session_state
    cur = _current()
    last = ss.get(_LAST)
    # widget values arrive in session state before the script runs: any difference is the user's change
    changed = any(key in ss and ss[key] != value for key, value in ss.get(_SHOWN, {}).items())
    ctx = get_script_run_ctx()
    history = ctx is not None and ctx.is_history_navigation
    ss[_WINS] = last is None or (history and cur != last) or (bool(cur) and cur != last and not changed)
    ss[_BOUND] = {}


def url_wins() -> bool:
    """True when this rerun takes its state from the URL."""
    return bool(st.session_state.get(_WINS))


def bind(key: str, name: str, *, default: Any, decode: Callable[[Encoded], Any], encode: Callable[[Any], Encoded],
         valid: Callable[[Any], Any] = lambda v: v) -> Any:
    """Tie the widget keyed ``key`` to query parameter ``name``; call it just before drawing the widget,
    which must then be drawn without its own default (the value lives in session state).

    ``decode``: parameter values (a list of str) -> widget value or :data:`INVALID`; ``encode``: the
    inverse ([] for "not in the URL"); ``valid``: value -> the value the widget accepts now (options may
    have changed) or :data:`INVALID`. Returns the value the widget will show.
    """
    ss = st.session_state
    if url_wins():
        raw = st.query_params.get_all(name)
        value = decode([str(v) for v in raw]) if raw else INVALID
        ss[key] = default if value is INVALID else value
    elif key not in ss:
        ss[key] = default
    checked = valid(ss[key])
    if checked is INVALID:
        checked = default
    if checked != ss[key]:
        ss[key] = checked
    bound = ss.setdefault(_BOUND, {})
    bound[name] = (key, encode, default)
    return checked


def _bound_params() -> dict[str, Encoded]:
    """Parameter name -> encoded values of every widget bound so far this run that is not at its default."""
    ss = st.session_state
    params: dict[str, Encoded] = {}
    for name, (key, encode, default) in ss.get(_BOUND, {}).items():
        if key in ss and ss[key] != default:
            enc = encode(ss[key])
            if enc:
                params[name] = enc
    return params


def params(**overrides: Encoded) -> dict[str, Encoded]:
    """The query parameters of what this run shows: the values of the widgets bound so far (the sidebar's time
    range and filters, when called from a page), as :func:`publish` writes them, with ``overrides`` (parameter ->
    values; an empty list drops the parameter) on top. For ``st.page_link`` / ``st.switch_page``, which
    percent-encode them: an untrusted value cannot change the link's target."""
    return {k: v for k, v in (_bound_params() | overrides).items() if v}


def publish() -> None:
    """Write every widget bound this run into the query string (parameters at their default are left out,
    so a plain page link stays plain). Called by the page footer, after every widget."""
    ss = st.session_state
    params = _bound_params()
    if params != _current():
        st.query_params.from_dict(params)
    ss[_LAST] = params
    ss[_SHOWN] = {key: copy.copy(ss[key]) for key, _, _ in ss.get(_BOUND, {}).values() if key in ss}


# ----------------------------------------------------------------------------- codecs
def text(max_len: int = 1000) -> tuple[Callable[[Encoded], Any], Callable[[Any], Encoded]]:
    """(decode, encode) of one free-text value, cut to ``max_len`` characters."""
    return (lambda raw: raw[0][:max_len]), (lambda v: [str(v)] if v else [])


def choice(options: list[Any] | tuple[Any, ...]) -> tuple[Callable[[Encoded], Any], Callable[[Any], Encoded]]:
    """(decode, encode) of one of ``options`` (compared as text)."""
    by_text = {str(o): o for o in options}
    return (lambda raw: by_text.get(raw[0], INVALID)), (lambda v: [] if v is None else [str(v)])


def many() -> tuple[Callable[[Encoded], Any], Callable[[Any], Encoded]]:
    """(decode, encode) of a multiselect: a repeated parameter (``?service=a&service=b``)."""
    return (lambda raw: list(dict.fromkeys(raw))), (lambda v: [str(x) for x in v])


def flag() -> tuple[Callable[[Encoded], Any], Callable[[Any], Encoded]]:
    """(decode, encode) of a checkbox/toggle: ``1`` or ``0``."""
    return (lambda raw: {"1": True, "0": False}.get(raw[0], INVALID)), (lambda v: ["1" if v else "0"])


def integer(lo: int = 1, hi: int = 10**9) -> tuple[Callable[[Encoded], Any], Callable[[Any], Encoded]]:
    """(decode, encode) of a whole number in ``[lo, hi]`` written in ASCII digits (``page=3``)."""

    def decode(raw: Encoded) -> Any:
        v = raw[0].strip()
        # the length check first: int() of a digit string over 4,300 digits raises (CPython's conversion limit)
        ok = v.isascii() and v.isdigit() and len(v) <= len(str(hi))
        return int(v) if ok and lo <= int(v) <= hi else INVALID

    return decode, (lambda v: [str(int(v))])


def among(options: list[Any]) -> Callable[[Any], Any]:
    """Validator of a multiselect value: keeps the selected values still offered (in selection order)."""
    allowed = set(options)
    return lambda v: [x for x in (v or []) if x in allowed]


def one_of(options: list[Any] | tuple[Any, ...]) -> Callable[[Any], Any]:
    """Validator of a single choice."""
    return lambda v: v if v in options else INVALID
