"""Alarms benchmarks: figures side by side with the named alternative, as ratios, in one run.

1. Validation of the demo stack's PutMetricAlarm requests: ``alarms.validate.validate_request``
   (model incl. max lengths/enums/patterns + cross-field rules) vs botocore's ``ParamValidator``
   (what ``validate_parameters`` runs; required/types/min only).
2. Alarm-state evaluation over 7 days of 1-minute datapoints (10,080 periods, 20 % missing) for a
   3-of-5 alarm: ``alarms.evaluation.evaluate_states`` (CloudWatch's evaluation range and
   treat-missing-data rules) vs a pandas rolling count of breaching datapoints (M of N with missing
   data simply dropped, the usual shortcut), and vs the window-by-window reference implementation.
3. The console dashboard of the demo stack: ``alarms.dashboard_body.validate_body`` (the documented
   body rules) vs ``json.loads`` of the same body text (the floor: reading it at all), and building the
   body vs building the catalogue it comes from.

Run: ``.venv/bin/python benchmarks/alarms_bench.py``
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the reference implementation is a test oracle (tests.support)


def _best(fn, repeat: int = 5) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    import botocore.session
    import pandas as pd
    from botocore.validate import ParamValidator

    from alarms import build_catalogue, load_config
    from alarms.evaluation import evaluate_states
    from tests.support.alarm_evaluation import evaluate_states_reference
    from alarms.validate import validate_request

    requests = [d.to_request() for d in build_catalogue(load_config(ROOT / "alarms" / "demo-stack.yaml"))]
    shape = botocore.session.get_session().get_service_model("cloudwatch").operation_model("PutMetricAlarm").input_shape
    validate_request(requests[0])  # load the model once
    ours = _best(lambda: [validate_request(r) for r in requests])
    boto = _best(lambda: [ParamValidator().validate(r, shape) for r in requests])
    n = len(requests)
    print(f"validation, {n} requests: idemwatch {ours / n * 1e6:8.1f} us/request | botocore ParamValidator "
          f"{boto / n * 1e6:8.1f} us/request | ratio {ours / boto:5.2f}x")

    rng = random.Random(7)
    values = [None if rng.random() < 0.2 else rng.random() * 10 for _ in range(7 * 24 * 60)]
    kw: dict = {"threshold": 8, "comparison": "GreaterThanThreshold", "evaluation_periods": 5,
                "datapoints_to_alarm": 3, "treat_missing": "notBreaching"}
    ours = _best(lambda: evaluate_states(values, **kw), repeat=3)
    reference = _best(lambda: evaluate_states_reference(values, **kw), repeat=3)
    series = pd.Series(values, dtype="float64")

    def rolling() -> None:
        breaching = (series > 8).astype("int64")
        _ = breaching.rolling(5, min_periods=1).sum() >= 3

    pandas_t = _best(rolling, repeat=3)
    print(f"evaluation, {len(values)} periods: idemwatch {ours * 1e3:8.1f} ms | pandas rolling count "
          f"{pandas_t * 1e3:8.1f} ms | ratio {ours / pandas_t:5.1f}x "
          f"({len(values) / ours:,.0f} periods/s; the rolling count ignores the evaluation range and "
          f"treat-missing-data)")
    print(f"evaluation, {len(values)} periods: idemwatch {ours * 1e3:8.1f} ms | window-by-window reference "
          f"{reference * 1e3:8.1f} ms | ratio {ours / reference:5.2f}x")

    import json

    from alarms.console_dashboard import body_json, build_body, concrete
    from alarms.dashboard_body import validate_body

    cfg = load_config(ROOT / "alarms" / "demo-stack.yaml")
    defs = build_catalogue(cfg)
    text = body_json(build_body(cfg, defs, concrete(cfg)))
    widgets = len(json.loads(text)["widgets"])
    check = _best(lambda: validate_body(text), repeat=7)
    floor = _best(lambda: json.loads(text), repeat=7)
    build = _best(lambda: build_body(cfg, defs, concrete(cfg)), repeat=5)
    catalogue = _best(lambda: build_catalogue(cfg), repeat=5)
    print(f"dashboard body, {widgets} widgets / {len(text):,} bytes: validate_body {check * 1e3:7.2f} ms | json.loads "
          f"{floor * 1e3:7.2f} ms (floor) | ratio {check / floor:5.1f}x")
    print(f"dashboard body: build {build * 1e3:7.2f} ms | build_catalogue {catalogue * 1e3:7.2f} ms | ratio "
          f"{build / catalogue:5.2f}x")


if __name__ == "__main__":
    main()
