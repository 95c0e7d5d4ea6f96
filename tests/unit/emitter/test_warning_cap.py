"""Warning records stay far under CloudWatch's 256 KB event limit and count what they cut (issue 10: a warning
record listing 10,000 failures was one 2.4 MB line).

"Event size: 256 KB (maximum). This quota can't be changed."
(https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/cloudwatch_limits_cwl.html)
"""

from __future__ import annotations

import json

from emitter import Emitter, MemorySink, WarningCode
from emitter.output import WARNING_LIST_MAX_BYTES, Problems, dropped_fields

CLOUDWATCH_EVENT_BYTES = 256 * 1024


def warnings_of(mem: MemorySink) -> list[dict]:
    return [r for r in map(json.loads, mem.lines) if "idemwatch_warning" in r]


def test_ten_thousand_missing_item_identifiers_make_one_bounded_warning():
    mem = MemorySink()
    em = Emitter(service="s", sink=mem)
    resp = em.batch_item_failures([None] * 10_000)
    assert resp == {"batchItemFailures": [{"itemIdentifier": ""}]}
    (w,) = warnings_of(mem)
    line = next(line for line in mem.lines if "idemwatch_warning" in line)
    assert len(line.encode()) <= WARNING_LIST_MAX_BYTES + 1024 < CLOUDWATCH_EVENT_BYTES // 4
    listed = len(w["idemwatch_dropped"])
    assert listed > 50  # the record still shows a useful sample
    # 10,000 items: the first is missing, the other 9,999 are missing AND duplicates of "" (2 problems each)
    assert listed + w["idemwatch_dropped_omitted"] == 19_999
    assert w["idemwatch_dropped_by_code"] == {WarningCode.MISSING_ITEM_IDENTIFIER: 10_000,
                                              WarningCode.DUPLICATE_ITEM_IDENTIFIER: 9_999}
    assert em.warnings == w["idemwatch_dropped_by_code"]  # the counters are not cut


def test_many_bad_properties_in_one_call():
    mem = MemorySink()
    em = Emitter(service="s", sink=mem)
    em.succeeded(None, "k", **{f"ratio_{i}": float("nan") for i in range(10_000)})
    (w,) = warnings_of(mem)
    assert max(len(line) for line in mem.lines) < CLOUDWATCH_EVENT_BYTES
    assert len(w["idemwatch_dropped"]) + w["idemwatch_dropped_omitted"] == 10_000
    assert w["idemwatch_dropped_by_code"] == {WarningCode.INVALID_PROPERTY: 10_000}
    # the listed entries are the first ones, in order
    assert [d["element"] for d in w["idemwatch_dropped"][:3]] == ["property:ratio_0", "property:ratio_1",
                                                                   "property:ratio_2"]


def test_small_warning_is_listed_whole_without_cut_fields():
    mem = MemorySink()
    em = Emitter(service="s", sink=mem)
    em.succeeded(None, "k", a=float("nan"), b=float("inf"))
    (w,) = warnings_of(mem)
    assert len(w["idemwatch_dropped"]) == 2
    assert "idemwatch_dropped_omitted" not in w and "idemwatch_dropped_by_code" not in w


def test_dropped_fields_budget_is_exact():
    p = Problems()
    for i in range(100):
        p.add("c", f"e{i:03d}", "r" * 300)  # reason is cut to 256
    assert all(len(r) == 256 for _, _, r in p)
    one = len(json.dumps({"code": "c", "element": "e000", "reason": "r" * 256}, separators=(",", ":")))
    f = dropped_fields(p, max_bytes=2 + 10 * (one + 1))
    assert len(f["idemwatch_dropped"]) == 10 and f["idemwatch_dropped_omitted"] == 90
    assert len(json.dumps(f["idemwatch_dropped"], separators=(",", ":"))) <= 2 + 10 * (one + 1)
