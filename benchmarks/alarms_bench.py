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
4. The other two kinds of the demo stack: PutCompositeAlarm (rule grammar and limits, references) and
   PutInsightRule (rule syntax) requests through ``validate_request`` vs botocore's ``ParamValidator``; and the
   parameterised template and module resolved and validated for every Region code of botocore's partition data.
5. On a real demo run (simulate -> logs -> ``collect local``): the composite backtest from the children's timelines
   vs the metric-alarm backtest it combines; the Contributor Insights replay of the 12 rules on the trail vs the
   same top-N as one DuckDB ``GROUP BY`` per rule over the trail's parquet (the named alternative), on the demo's
   trail and on it repeated 50 times (a bigger history of the same shape).

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
    from alarms.validate import validate_request
    from tests.support.alarm_evaluation import evaluate_states_reference

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

    from alarms.composite import build_composites
    from alarms.console_dashboard import body_json, build_body, concrete
    from alarms.dashboard_body import validate_body
    from alarms.insight_rules import build_insight_rules

    cfg = load_config(ROOT / "alarms" / "demo-stack.yaml")
    defs = build_catalogue(cfg)
    extra = (build_composites(cfg, defs), build_insight_rules(cfg))  # the demo's dashboard: composites, Contributors
    text = body_json(build_body(cfg, defs, concrete(cfg), *extra))
    widgets = len(json.loads(text)["widgets"])
    check = _best(lambda: validate_body(text), repeat=7)
    floor = _best(lambda: json.loads(text), repeat=7)
    build = _best(lambda: build_body(cfg, defs, concrete(cfg), *extra), repeat=5)
    catalogue = _best(lambda: build_catalogue(cfg), repeat=5)
    print(f"dashboard body, {widgets} widgets / {len(text):,} bytes: validate_body {check * 1e3:7.2f} ms | json.loads "
          f"{floor * 1e3:7.2f} ms (floor) | ratio {check / floor:5.1f}x")
    print(f"dashboard body: build {build * 1e3:7.2f} ms | build_catalogue {catalogue * 1e3:7.2f} ms | ratio "
          f"{build / catalogue:5.2f}x")

    _other_kinds(cfg, defs, _best)
    _replays(cfg, defs, _best)


def _other_kinds(cfg, defs, best) -> None:
    import botocore.session
    from botocore.validate import ParamValidator

    from alarms.cfn_template import build_template, requests_from_cloudformation
    from alarms.composite import build_composites
    from alarms.insight_rules import build_insight_rules
    from alarms.regions import region_codes
    from alarms.terraform import requests_from_terraform
    from alarms.tf_module import build_module, resolve_module
    from alarms.validate import validate_request, validate_requests

    model = botocore.session.get_session().get_service_model("cloudwatch")
    for label, op, requests in (("composite", "PutCompositeAlarm", [c.to_request() for c in build_composites(cfg, defs)]),
                                ("insight rule", "PutInsightRule", [r.to_request() for r in build_insight_rules(cfg)])):
        shape = model.operation_model(op).input_shape
        validate_request(requests[0])
        ours = best(lambda requests=requests: [validate_request(r) for r in requests])
        boto = best(lambda requests=requests, shape=shape: [ParamValidator().validate(r, shape) for r in requests])
        n = len(requests)
        print(f"validation, {n} {label} requests: idemwatch {ours / n * 1e6:8.1f} us/request | botocore "
              f"ParamValidator {boto / n * 1e6:8.1f} us/request | ratio {ours / boto:5.2f}x")
    template = build_template(cfg, defs, dashboard=False)
    module = build_module(cfg, defs)
    regions = [code for _, code in region_codes()]

    def sweep() -> None:
        for region in regions:
            validate_requests(requests_from_cloudformation(template, region=region))
            validate_requests(requests_from_terraform(resolve_module(module["main.tf.json"],
                                                                     module["variables.tf.json"], region=region)))

    t = best(sweep, repeat=1)
    one = best(lambda: validate_requests(requests_from_cloudformation(template)), repeat=3)
    print(f"every Region: {len(regions)} Regions x (template + module): {t:6.2f} s | one template in one Region "
          f"{one * 1e3:7.1f} ms | ratio {t / one:6.1f}x (2 x {len(regions)} = {2 * len(regions)} resolutions)")


def _replays(cfg, defs, best) -> None:
    import tempfile

    import duckdb
    import pandas as pd

    from alarms.backtest import run_backtest
    from alarms.composite import build_composites
    from alarms.composite_backtest import backtest_composites
    from alarms.contributors import load_trail, top_contributors
    from alarms.insight_rules import build_insight_rules
    from collector.collect import collect_local
    from dashboard.demo import run_demo

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        run_demo(out, seed=7, events=10_000, duration_s=3 * 3600, start_ms=1_767_607_200_000)
        collect_local([out / "logs"], out)
        results = run_backtest(defs, out)
        composites = build_composites(cfg, defs)
        metric_t = best(lambda: run_backtest(defs, out), repeat=3)
        comp_t = best(lambda: backtest_composites(composites, results), repeat=3)
        print(f"backtest, demo run (3 h, 10,000 events): {len(composites)} composites from their children "
              f"{comp_t * 1e3:7.1f} ms | the {len(defs)} metric alarms {metric_t * 1e3:7.1f} ms | ratio "
              f"{comp_t / metric_t:5.2f}x")
        rules = [r for r in build_insight_rules(cfg) if r.key in trail_columns(out)]  # tenant_id: not in the trail
        trail = load_trail(out)
        path = out / "tables" / "trail.parquet"
        big_path = out / "trail-x50.parquet"
        big = pd.concat([trail.assign(timestamp=trail["timestamp"] + pd.Timedelta(hours=3 * i)) for i in range(50)])
        big.drop(columns=["time_s"]).to_parquet(big_path, index=False)
        for label, parquet in (("demo trail", path), ("demo trail x50", big_path)):
            df = load_trail(out) if parquet == path else _with_time(big)
            ours = best(lambda df=df: [top_contributors(r.body(), df) for r in rules], repeat=3)

            def duck(parquet: Path = parquet) -> None:
                con = duckdb.connect()
                for r in rules:
                    con.execute(f"SELECT {r.key}, count(*) AS n FROM read_parquet(?) WHERE outcome = ? AND service = ? "
                                f"AND {r.key} IS NOT NULL AND log_group IN (SELECT unnest(?)) GROUP BY ALL "
                                f"ORDER BY n DESC, {r.key} LIMIT 10",
                                [str(parquet), r.outcome, r.service, list(r.log_groups)]).fetchall()
                con.close()

            theirs = best(duck, repeat=3)
            print(f"contributors, {len(rules)} replayable rules on the {label} ({len(df):,} records): replay "
                  f"{ours * 1e3:7.1f} ms | DuckDB GROUP BY per rule {theirs * 1e3:7.1f} ms | ratio {ours / theirs:5.2f}x")


def trail_columns(out: Path) -> set[str]:
    from alarms.contributors import load_trail

    return set(load_trail(out).columns)


def _with_time(df):
    import pandas as pd

    ts = pd.to_datetime(df["timestamp"], utc=True)
    return df.assign(time_s=ts.astype("int64") / {"s": 1, "ms": 1e3, "us": 1e6, "ns": 1e9}[ts.dt.unit])


if __name__ == "__main__":
    main()
