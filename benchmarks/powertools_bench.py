"""Powertools integration benchmark: what ``emitter.powertools.instrument`` adds per ``@idempotent`` call, against
bare Powertools ``@idempotent`` on the same persistence layer, for this checkout and an older one side by side.

    .venv/bin/python benchmarks/powertools_bench.py                  # this checkout vs 620890b, 5 rounds
    .venv/bin/python benchmarks/powertools_bench.py --before <commit> --rounds 7 [--no-dynamodb]

Method
- Input shapes (the layers Powertools users run): DynamoDB (``DynamoDBPersistenceLayer`` on moto's server over HTTP
  on 127.0.0.1: the common case; the request dominates, so its overhead figure is noisy), Powertools' cache layer
  (``CachePersistenceLayer`` over the Redis-like client object of ``tests/support``: no network, so the figure is the
  integration's own CPU cost) and the integration's in-memory layer. Each with a new key (claimed + succeeded: two
  outcome records) and a replay (duplicate_completed: one).
- Each round runs every tree in a fresh process (``--worker``), trees in a new random order each round. Inside a
  worker, bare and instrumented handlers alternate batch by batch (``BATCHES`` batches of ``N`` calls each, new keys
  drawn fresh, in a new random order each batch); the figure per candidate and round is the fastest batch mean, in
  microseconds per call (on 2 shared cores the minimum of many short batches is the figure least disturbed by
  preemption; the reported figures are then medians over rounds).
- Reported: per tree and shape, median over rounds of bare, instrumented, their difference (the overhead) and
  their ratio; then the overhead of this checkout over that of the older one. The emitter writes to a
  DiscardSink: the cost measured is the integration and the emitter's record building, not an output stream.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
N = 50
BATCHES = 40
SHAPES = ("memory", "cache", "dynamodb")


class _WallClock:
    @property
    def now(self) -> float:
        return time.time()


def _layer(shape: str, moto_url: str | None, table: str | None):
    if shape == "memory":
        from emitter.powertools import InMemoryPersistenceLayer

        return InMemoryPersistenceLayer()
    if shape == "cache":
        from aws_lambda_powertools.utilities.idempotency.persistence.cache import CachePersistenceLayer

        from tests.support.powertools_harness import FakeRedis

        return CachePersistenceLayer(client=FakeRedis(_WallClock()))  # type: ignore[arg-type]
    import boto3
    from aws_lambda_powertools.utilities.idempotency import DynamoDBPersistenceLayer

    client = boto3.client("dynamodb", endpoint_url=moto_url, region_name="us-east-1", aws_access_key_id="x",
                          aws_secret_access_key="x")
    return DynamoDBPersistenceLayer(table_name=table, boto3_client=client)


def worker(shapes: list[str], moto_url: str | None) -> dict[str, dict[str, float]]:
    """us per call, by "shape/case": bare and instrumented, the fastest batch mean (this process's emitter)."""
    from aws_lambda_powertools.utilities.idempotency import IdempotencyConfig, idempotent

    from emitter import DiscardSink, Emitter
    from emitter.powertools import instrument

    warnings.simplefilter("ignore")

    class Ctx:
        aws_request_id = "r"
        function_name = "bench-fn"

        def get_remaining_time_in_millis(self) -> int:
            return 30_000

    table = None
    if "dynamodb" in shapes:
        import boto3

        admin = boto3.client("dynamodb", endpoint_url=moto_url, region_name="us-east-1", aws_access_key_id="x",
                             aws_secret_access_key="x")
        table = f"bench-{os.getpid()}"
        admin.create_table(TableName=table, KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
                           AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
                           BillingMode="PAY_PER_REQUEST")

    out: dict[str, dict[str, float]] = {}
    ctx = Ctx()
    for shape in shapes:
        handlers = {}
        layers = []
        for name in ("bare", "instrumented"):
            layer = _layer(shape, moto_url, table)
            layers.append(layer)
            if name == "instrumented":
                instrument(layer, Emitter(service="orders", sink=DiscardSink()))

            @idempotent(persistence_store=layer, config=IdempotencyConfig(event_key_jmespath="order_id"),
                        key_prefix=f"{shape}-{name}")
            def handler(event, context):
                return {"ok": True}

            handler({"order_id": "replay"}, ctx)
            handlers[name] = handler
        n = N if shape != "dynamodb" else N // 5
        means: dict[tuple[str, str], list[float]] = {(k, c): [] for k in handlers for c in ("new key", "replay")}
        counter = 0
        for _ in range(BATCHES):
            order = list(handlers.items())
            random.shuffle(order)
            for name, fn in order:
                events = [{"order_id": f"k{counter + i}"} for i in range(n)]
                counter += n
                t0 = time.perf_counter_ns()
                for ev in events:
                    fn(ev, ctx)
                means[(name, "new key")].append((time.perf_counter_ns() - t0) / n / 1e3)
                ev = {"order_id": "replay"}
                t0 = time.perf_counter_ns()
                for _ in range(n):
                    fn(ev, ctx)
                means[(name, "replay")].append((time.perf_counter_ns() - t0) / n / 1e3)
            for layer in layers:  # the client object's call log would grow for the whole run (and slow the GC)
                getattr(getattr(layer, "client", None), "calls", []).clear()
        for case in ("new key", "replay"):
            out[f"{shape}/{case}"] = {k: min(means[(k, case)]) for k in handlers}
    return out


def export(commit: str, dest: Path) -> None:
    """The emitter/ and tests/support/ of ``commit`` under ``dest`` (tests/support from this checkout when the
    commit has none: the benchmark's client object)."""
    arch = subprocess.run(["git", "-C", str(ROOT), "archive", commit, "emitter"], check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(dest)], input=arch.stdout, check=True)
    support = dest / "tests" / "support"
    support.mkdir(parents=True, exist_ok=True)
    for f in ("__init__.py", "powertools_harness.py"):
        (support / f).write_bytes((ROOT / "tests" / "support" / f).read_bytes())
    (dest / "tests" / "__init__.py").touch()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", default="620890b", help="the older commit (default: 620890b)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--no-dynamodb", action="store_true", help="skip the moto-backed shape")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--moto", help=argparse.SUPPRESS)
    ap.add_argument("--shapes", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        sys.path.insert(0, args.worker)
        print(json.dumps(worker(args.shapes.split(","), args.moto)))
        return

    shapes = [s for s in SHAPES if not (args.no_dynamodb and s == "dynamodb")]
    server = None
    moto_url = None
    if "dynamodb" in shapes:
        import logging

        from moto.server import ThreadedMotoServer

        logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one access-log line per request otherwise

        server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        server.start()
        host, port = server.get_host_and_port()
        moto_url = f"http://{host}:{port}"
    from importlib.metadata import version

    with tempfile.TemporaryDirectory() as tmp:
        before = Path(tmp)
        export(args.before, before)
        trees = {f"before ({args.before})": str(before), "after (this checkout)": str(ROOT)}
        runs: dict[str, list[dict[str, dict[str, float]]]] = {t: [] for t in trees}
        for _ in range(args.rounds):
            order = list(trees.items())
            random.shuffle(order)
            for name, path in order:
                cmd = [sys.executable, __file__, "--worker", path, "--shapes", ",".join(shapes)]
                if moto_url:
                    cmd += ["--moto", moto_url]
                res = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=path,
                                     env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
                runs[name].append(json.loads(res.stdout.strip().splitlines()[-1]))
    if server is not None:
        server.stop()

    load = os.getloadavg()
    print(f"Powertools integration overhead per @idempotent call, medians of {args.rounds} interleaved rounds "
          f"(aws-lambda-powertools {version('aws-lambda-powertools')}, Python {sys.version.split()[0]}, "
          f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f})")
    print(f"{'shape/case':20} {'tree':28} {'bare us':>9} {'instr. us':>10} {'overhead us':>12} {'ratio':>7}")
    overhead: dict[tuple[str, str], float] = {}
    for key in runs[next(iter(trees))][0]:
        for name in trees:
            bare = statistics.median(r[key]["bare"] for r in runs[name])
            inst = statistics.median(r[key]["instrumented"] for r in runs[name])
            over = statistics.median(r[key]["instrumented"] - r[key]["bare"] for r in runs[name])
            ratio = statistics.median(r[key]["instrumented"] / r[key]["bare"] for r in runs[name])
            overhead[(key, name)] = over
            print(f"{key:20} {name:28} {bare:9.1f} {inst:10.1f} {over:12.1f} {ratio:6.2f}x")
    b, a = list(trees)
    print("\noverhead after / before (per shape and case):")
    for key in runs[b][0]:
        before_o, after_o = overhead[(key, b)], overhead[(key, a)]
        ratio = f"{after_o / before_o:5.2f}x" if before_o > 0 and after_o > 0 else "n/a (below the noise)"
        print(f"  {key:20} {after_o:7.1f} us / {before_o:7.1f} us = {ratio}")


if __name__ == "__main__":
    main()
