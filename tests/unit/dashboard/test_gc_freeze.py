"""After a dataset loads, its objects sit in the collector's permanent generation (gc.freeze), so CPython's full
collection, which the server no longer runs after every rerun, does not walk them inside a page's run; the next
data version unfreezes first, so an evicted dataset is still freed (even from a reference cycle)."""

from __future__ import annotations

import gc
import weakref

import pytest

from dashboard.data import clear_cache, load_dataset


@pytest.fixture()
def thawed():
    clear_cache()
    gc.unfreeze()
    yield
    clear_cache()
    gc.unfreeze()


def test_loaded_tables_are_frozen(thawed, tmp_path, sample_mod):
    ds = load_dataset(sample_mod.write_data_dir(tmp_path / "a"))
    assert gc.get_freeze_count() > 0
    frame = ds.table("outcomes")
    assert not any(o is frame for o in gc.get_objects())  # not in generations 0-2: a collection skips it


def test_an_evicted_dataset_is_freed_from_a_cycle(thawed, tmp_path, sample_mod):
    class Sentinel:
        pass

    ds = load_dataset(sample_mod.write_data_dir(tmp_path / "a"))
    freed = []
    s = Sentinel()
    cycle: list = [s]
    cycle.append(cycle)  # only the cycle collector can free this
    ds.manifest["_cycle"] = cycle
    weakref.finalize(s, freed.append, True)
    gc.collect()
    gc.freeze()  # the cycle is frozen with the dataset, as after the load
    del ds, s, cycle
    clear_cache()
    gc.collect()
    assert not freed  # frozen: a collection leaves it alone
    load_dataset(sample_mod.write_data_dir(tmp_path / "b"))  # a new data version: unfreeze, load, collect
    assert freed == [True]
