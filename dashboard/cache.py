"""The dashboard's one caching mechanism: Streamlit's.

- :func:`answer` (``st.cache_data``) caches every computed answer (a number, a small DataFrame, a figure's rows)
  process-wide, so a rerun or another session asking the same question of the same data version gets it without
  recomputing. Each hit is a copy: a caller may change what it gets.
- ``st.cache_resource`` holds what is loaded once per data version and shared, never copied: the
  :class:`dashboard.data.Dataset` (``dashboard.data.load_dataset``) and the trail's in-memory id index, a DuckDB
  connection (``dashboard.trail``).

A :class:`~dashboard.data.Dataset` argument is keyed by its data directory and fingerprint (manifest bytes and
table file stats), not by hashing its tables: a re-collect changes the fingerprint, so every answer over the old
data is simply no longer asked for, and the entry limit evicts it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

import streamlit as st

from dashboard.data import Dataset

__all__ = ["ANSWERS", "answer", "clear", "dataset_key"]

P = ParamSpec("P")
R = TypeVar("R")

# Outside `streamlit run` (tests, the benchmark) Streamlit warns, once per cached function, that it keeps the cache
# in this process's memory: that is what the dashboard wants there, so the warning is noise.
logging.getLogger("streamlit.runtime.caching.cache_data_api").setLevel(logging.ERROR)

ANSWERS = 1024
"""Cached answers kept per function (least recently used dropped first)."""


def dataset_key(ds: Dataset) -> tuple[str, str]:
    """What identifies a dataset in a cache key: (data directory, fingerprint)."""
    return str(ds.data_dir), ds.fingerprint


_HASH_FUNCS: dict[str | type[Any], Callable[[Any], Any]] = {Dataset: dataset_key}


def answer(fn: Callable[P, R]) -> Callable[P, R]:
    """Cache ``fn``'s answers in ``st.cache_data`` (arguments hashed by Streamlit; a Dataset by :func:`dataset_key`)."""
    return st.cache_data(max_entries=ANSWERS, show_spinner=False, hash_funcs=_HASH_FUNCS)(fn)


def clear() -> None:
    """Drop every cached answer and resource (tests, the benchmark's cold runs)."""
    st.cache_data.clear()
    st.cache_resource.clear()
