"""Emitter benchmark: import time, per-invocation cost and bytes per outcome, side by side with Powertools Metrics,
aws-embedded-metrics and a hand-written ``json.dumps`` EMF document.

    .venv/bin/python benchmarks/emitter_bench.py            # full run (~1 minute on 2 cores)
    .venv/bin/python benchmarks/emitter_bench.py --quick    # fewer processes / iterations
    .venv/bin/python benchmarks/emitter_bench.py --baseline <commit>  # + that commit's emitter, interleaved
    .venv/bin/python benchmarks/emitter_bench.py --baseline /tmp/old   # or a folder holding an older emitter/
      (a commit is extracted with ``git archive <commit> emitter`` into a temporary folder; its emitter is imported
      and run alongside this checkout's)

Method
- Import: ``python -c "<import>"`` in fresh processes, round-robin over the candidates (so machine drift hits all
  alike), >= 20 processes each; reported: median wall time of the whole process and its difference to the bare
  interpreter (``python -c pass``; noisy on a loaded machine), and the median duration of the import statement
  measured inside the fresh process, as wall clock (perf_counter) and CPU time (process_time). The target is
  judged on the in-process wall figure. Bytecode is compiled first (``compileall``), as pip does for site-packages: this checkout runs with
  PYTHONDONTWRITEBYTECODE=1, which would otherwise make the emitter recompile on every start.
- Per invocation: the same handler shape for every library: a 10-record SQS batch event arrives, the handler records
  5 outcomes (5 Count metrics: EventsSucceeded, DuplicateCompleted, PayloadConflict, RetryableFailure,
  PoisonMessage) with dimensions Service + Operation, and the library flushes at the end of the invocation.
  * emitter: ``@em.handler`` + 5 outcome calls (each also writes its JSON log record) + flush, StdoutSink;
  * Powertools: ``@metrics.log_metrics`` + ``add_dimension`` + 5 ``add_metric`` (prints one EMF document);
  * aws-embedded-metrics: ``@metric_scope`` + ``put_dimensions`` + 5 ``put_metric`` (Lambda environment: prints);
  * hand-written: one dict -> ``json.dumps`` -> write.
  Output capture: every candidate writes to ``sys.stdout``, which is replaced during timing by the same no-op text
  sink (``write``/``flush`` do nothing), so no one pays for a terminal or a pipe. The emitter is also shown with
  its DiscardSink, and a "full path" row adds ``em.records(event)`` (10 ``received`` records, RecordAge, Redelivery)
  and ``batch_item_failures`` (which the other libraries have no equivalent for). A second full-path row runs it
  for a service with an active Powertools Logger holding a correlation id (every record then carries it).
  A second Powertools row emits the SAME metrics as the full path (EventsReceived and RecordAge per record,
  Redelivery, the 5 outcomes, BatchItemFailures): the like-for-like comparison for it.
  Timing: 400 rounds; in each round every candidate runs one batch of 40 invocations, in a new random order each
  round. Reported per candidate in microseconds per invocation: the median over rounds of the batch's CPU time
  (thread_time_ns: time the thread did not run while another process had the core is not counted), and the best
  batch's wall time (perf_counter_ns). Ratios are paired: each round's CPU time of a candidate over Powertools'
  in the same round, the median of those ratios.
- Idempotency integration: the cost ``emitter.powertools.instrument`` adds per ``@idempotent`` call, against bare
  Powertools ``@idempotent`` over the same in-memory persistence layer (a dict; no network, so the figure is the
  integration's own CPU cost), for a new key (claimed + succeeded records) and for a replay (duplicate_completed).
- Bytes: the emitter's output for one invocation of the workload, split into log records and EMF, per outcome;
  Powertools' EMF document for the same metrics for reference.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

os.environ.setdefault("AWS_LAMBDA_FUNCTION_NAME", "bench-fn")  # Lambda environment for aws-embedded-metrics
os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "Idempotency")
os.environ.setdefault("AWS_EMF_NAMESPACE", "Idempotency")

IMPORTS = {
    "bare interpreter": "pass",
    "emitter": "import emitter",
    "json only (hand-written EMF)": "import json",
    "Powertools Metrics": "from aws_lambda_powertools import Metrics",
    "aws-embedded-metrics": "from aws_embedded_metrics import metric_scope",
}

FULL = "emitter full path (+records, +batchItemFailures)"
BASELINE_IMPORT = "emitter (--baseline)"
BASELINE_FULL = "emitter full path, --baseline checkout"
METRICS = ["EventsSucceeded", "DuplicateCompleted", "PayloadConflict", "RetryableFailure", "PoisonMessage"]


class NullOut(io.TextIOBase):
    """The shared no-op stdout every candidate writes to during timing."""

    def write(self, s: str) -> int:
        return len(s)

    def flush(self) -> None:
        pass


class Ctx:
    aws_request_id = "c6af9ac6-7b61-11e6-9a41-93e812345678"
    function_name = "bench-fn"
    memory_limit_in_mb = 128
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:bench-fn"
    function_version = "$LATEST"

    def get_remaining_time_in_millis(self) -> int:
        return 29_000


def sqs_batch(n: int = 10) -> dict:
    now = int(time.time() * 1000)
    return {"Records": [{
        "messageId": f"059f36b4-87a3-44ab-83d2-66197583{i:04d}", "receiptHandle": "AQEB...", "body": "{}",
        "attributes": {"ApproximateReceiveCount": str(1 + (i == 3)), "SentTimestamp": str(now - 1500 + i),
                       "SenderId": "AIDAIENQZJOLO23YVJ4VO", "ApproximateFirstReceiveTimestamp": str(now - 1400)},
        "messageAttributes": {}, "md5OfBody": "99914b932bd37a50b983c5e7c90ae93b", "eventSource": "aws:sqs",
        "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:orders", "awsRegion": "us-east-1"}
        for i in range(n)]}


# --------------------------------------------------------------------------- import time
def measure_imports(processes: int, baseline: Path | None = None) -> dict[str, tuple[float, float, float]]:
    """{candidate: (median process wall ms, median in-process import wall ms, median in-process import CPU ms)};
    with ``baseline`` (a folder holding an older ``emitter/``) its import is a candidate too, in the same rounds."""
    imports = dict(IMPORTS)
    roots = {name: ROOT for name in imports}
    if baseline is not None:
        imports[BASELINE_IMPORT] = "import emitter"
        roots[BASELINE_IMPORT] = baseline
    for root in {ROOT, *roots.values()}:
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(root / "emitter")], check=True)
    probe = ("import time as _t; _c = _t.process_time(); _s = _t.perf_counter(); {stmt}; "
             "_w = _t.perf_counter() - _s; _u = _t.process_time() - _c; "
             "import sys; sys.stdout.write(f'{{_w}} {{_u}}')")
    wall: dict[str, list[float]] = {k: [] for k in imports}
    inproc: dict[str, list[float]] = {k: [] for k in imports}
    cpu: dict[str, list[float]] = {k: [] for k in imports}
    for _ in range(processes):
        for name, stmt in imports.items():
            env = dict(os.environ, PYTHONPATH=str(roots[name]))
            t0 = time.perf_counter()
            out = subprocess.run([sys.executable, "-c", probe.format(stmt=stmt)], capture_output=True, text=True,
                                 env=env, check=True, cwd="/")
            wall[name].append(time.perf_counter() - t0)
            w, u = out.stdout.split()
            inproc[name].append(float(w))
            cpu[name].append(float(u))
    med = statistics.median
    return {k: (med(wall[k]) * 1e3, med(inproc[k]) * 1e3, med(cpu[k]) * 1e3) for k in imports}


# --------------------------------------------------------------------------- per invocation
LOGGER_FULL = "emitter full path, Powertools Logger active"


def emitter_full_with_logger():
    """The full-path handler of an Emitter whose service has an active Powertools Logger holding a correlation id
    (the emitter finds it by itself; every record carries it). Its own service name, so the other candidates see no
    Logger."""
    from aws_lambda_powertools import Logger

    from emitter import Emitter, StdoutSink

    logger = Logger(service="orders-logged")
    logger.set_correlation_id("c0ffee00-7b61-11e6-9a41-93e812345678")
    handler = full_path_handler(Emitter(service="orders-logged", namespace="Idempotency", sink=StdoutSink()))
    handler._logger = logger  # keep the Logger alive with the handler
    return handler


def full_path_handler(em):
    """The full path a batch handler runs, on the Emitter ``em`` (this checkout's or a baseline's): ``records()``,
    5 outcome calls, ``batch_item_failures``; the wrapper flushes."""

    @em.handler(operation="ProcessOrders")
    def handler(ev, context):
        recs = em.records(ev)
        five_outcomes(em, recs)
        return em.batch_item_failures([recs[3]])

    return handler


def five_outcomes(em, recs) -> None:
    """The workload's 5 outcome calls (5 Count metrics) on the first 5 records."""
    em.succeeded(recs[0], key="acme:order-0")
    em.duplicate_completed(recs[1], key="acme:order-1")
    em.payload_conflict(recs[2], key="acme:order-2")
    em.retryable_failure(recs[3], key="acme:order-3", error_code="Throttled")
    em.poison_message(recs[4], key="acme:order-4", error_code="SchemaMismatch")


def build_candidates(with_logger: bool = True):
    from aws_embedded_metrics import metric_scope
    from aws_lambda_powertools import Metrics
    from aws_lambda_powertools.metrics import MetricUnit

    from emitter import DiscardSink, Emitter, StdoutSink

    event = sqs_batch()

    def emitter_handler(sink):
        em = Emitter(service="orders", namespace="Idempotency", sink=sink)
        from emitter.adapters import adapt_event

        recs, _ = adapt_event(event, int(time.time() * 1000))

        @em.handler(operation="ProcessOrders")
        def handler(ev, context):
            five_outcomes(em, recs)

        return handler, em

    metrics = Metrics(namespace="Idempotency", service="orders")
    same = Metrics(namespace="Idempotency", service="orders")

    @same.log_metrics
    def powertools_same_metrics(ev, context):
        same.add_dimension(name="Operation", value="ProcessOrders")
        now = int(time.time() * 1000)
        for r in ev["Records"]:
            attrs = r["attributes"]
            same.add_metric(name="EventsReceived", unit=MetricUnit.Count, value=1)
            same.add_metric(name="RecordAge", unit=MetricUnit.Milliseconds, value=now - int(attrs["SentTimestamp"]))
            if attrs["ApproximateReceiveCount"] != "1":
                same.add_metric(name="Redelivery", unit=MetricUnit.Count, value=1)
        for name in METRICS:
            same.add_metric(name=name, unit=MetricUnit.Count, value=1)
        same.add_metric(name="BatchItemFailures", unit=MetricUnit.Count, value=1)
        return {"batchItemFailures": [{"itemIdentifier": ev["Records"][3]["messageId"]}]}

    @metrics.log_metrics
    def powertools_handler(ev, context):
        metrics.add_dimension(name="Operation", value="ProcessOrders")
        for name in METRICS:
            metrics.add_metric(name=name, unit=MetricUnit.Count, value=1)

    @metric_scope
    def aem_handler(ev, context, metrics):
        metrics.set_namespace("Idempotency")
        metrics.put_dimensions({"Service": "orders", "Operation": "ProcessOrders"})
        for name in METRICS:
            metrics.put_metric(name, 1, "Count")

    def handwritten(ev, context):
        doc = {"_aws": {"Timestamp": int(time.time() * 1000), "CloudWatchMetrics": [{
            "Namespace": "Idempotency", "Dimensions": [["Service", "Operation"], ["Service"]],
            "Metrics": [{"Name": n, "Unit": "Count"} for n in METRICS]}]},
            "Service": "orders", "Operation": "ProcessOrders", **{n: 1 for n in METRICS}}
        sys.stdout.write(json.dumps(doc, separators=(",", ":")) + "\n")

    emitter_stdout, _ = emitter_handler(StdoutSink())
    emitter_discard, _ = emitter_handler(DiscardSink())
    emitter_full_stdout = full_path_handler(Emitter(service="orders", namespace="Idempotency", sink=StdoutSink()))
    candidates = {
        "emitter (StdoutSink)": emitter_stdout,
        "emitter (DiscardSink)": emitter_discard,
        FULL: emitter_full_stdout,
    }
    if with_logger:
        candidates[LOGGER_FULL] = emitter_full_with_logger()
    return event, {
        **candidates,
        "Powertools log_metrics": powertools_handler,
        "Powertools log_metrics, same metrics as the full path": powertools_same_metrics,
        "aws-embedded-metrics metric_scope": aem_handler,
        "hand-written json.dumps EMF": handwritten,
    }


def baseline_full_path(baseline: Path) -> object:
    """The full-path handler built from the ``emitter`` package under ``baseline``: its modules are imported in place
    of this checkout's for the time of the build (the handler keeps references to them), then this checkout's are
    put back."""
    ours = {k: v for k, v in sys.modules.items() if k == "emitter" or k.startswith("emitter.")}
    for k in ours:
        del sys.modules[k]
    sys.path.insert(0, str(baseline))
    try:
        _, candidates = build_candidates(with_logger=False)
        return candidates[FULL]
    finally:
        sys.path.remove(str(baseline))
        for k in [k for k in sys.modules if k == "emitter" or k.startswith("emitter.")]:
            del sys.modules[k]
        sys.modules.update(ours)


class Timing:
    """One candidate's per-invocation times over the rounds: ``cpu`` (µs of thread CPU time per invocation, one
    value per round) and ``best_wall`` (µs, the least wall time of a round)."""

    def __init__(self) -> None:
        self.cpu: list[float] = []
        self.best_wall = float("inf")

    @property
    def median_cpu(self) -> float:
        return statistics.median(self.cpu)

    def ratio(self, other: Timing) -> float:
        """The median over rounds of this candidate's CPU time over ``other``'s in the same round."""
        return statistics.median(a / b for a, b in zip(self.cpu, other.cpu, strict=True))


def measure_invocations(n: int, repeats: int, baseline: Path | None = None) -> dict[str, Timing]:
    """``repeats`` rounds of one batch of ``n`` invocations per candidate, the candidates in a new random order each
    round; each batch's thread CPU time and wall time (a shared 2-core machine preempts us: CPU time leaves out the
    time another process had the core)."""
    event, candidates = build_candidates()
    if baseline is not None:
        candidates[BASELINE_FULL] = baseline_full_path(baseline)
    ctx = Ctx()
    timings = {name: Timing() for name in candidates}
    real_stdout = sys.stdout
    sys.stdout = NullOut()
    try:
        for fn in candidates.values():
            for _ in range(200):  # warm-up (cold start paths, caches)
                fn(event, ctx)
        # a new random order every round: in a fixed order each candidate always follows the same one, whose warm
        # caches it inherits (an identical copy of the emitter read 0.92x of itself in the fixed order)
        order = list(candidates.items())
        rng = random.Random(0)
        for _ in range(repeats):
            rng.shuffle(order)
            for name, fn in order:
                c0, t0 = time.thread_time_ns(), time.perf_counter_ns()
                for _ in range(n):
                    fn(event, ctx)
                wall, cpu = time.perf_counter_ns() - t0, time.thread_time_ns() - c0
                timing = timings[name]
                timing.cpu.append(cpu / n / 1e3)
                timing.best_wall = min(timing.best_wall, wall / n / 1e3)
    finally:
        sys.stdout = real_stdout
    return timings


# --------------------------------------------------------------------------- idempotency integration
TAKEOVER_MODES = ("default: takeover observed", "takeover probe (read)", "no takeover detection")
"""The ``detect_takeover`` modes timed: the default (``"auto"``, for a layer other than DynamoDB ``"observe"``: the
record the layer reads during its own claim, no extra request), ``"read"`` (one ``_get_record`` before each claim)
and ``False``."""


def measure_idempotency(n: int, repeats: int) -> dict[str, float]:
    """us per @idempotent call: bare Powertools vs the instrumented layer, new keys and replays, interleaved."""
    from aws_lambda_powertools.utilities.idempotency import IdempotencyConfig, idempotent

    from emitter import DiscardSink, Emitter
    from emitter.powertools import InMemoryPersistenceLayer, instrument

    def make(instrumented: bool, detect_takeover: object = "auto"):
        layer = InMemoryPersistenceLayer()
        if instrumented:
            em = Emitter(service="orders", sink=DiscardSink())
            instrument(layer, em, detect_takeover=detect_takeover)
        cfg = IdempotencyConfig(event_key_jmespath="order_id")

        @idempotent(persistence_store=layer, config=cfg)
        def handler(event, context):
            return {"ok": True}

        return handler

    import warnings

    warnings.simplefilter("ignore")
    ctx = Ctx()
    cands = {"bare Powertools @idempotent": make(False),
             f"instrumented, {TAKEOVER_MODES[0]}": make(True),
             f"instrumented, {TAKEOVER_MODES[1]}": make(True, "read"),
             f"instrumented, {TAKEOVER_MODES[2]}": make(True, False)}
    counter = [0]
    best = {(name, case): float("inf") for name in cands for case in ("new key", "replay")}
    for fn in cands.values():
        fn({"order_id": "replay"}, ctx)
    for _ in range(repeats):
        for name, fn in cands.items():
            events = [{"order_id": f"k{counter[0] + i}"} for i in range(n)]
            counter[0] += n
            t0 = time.perf_counter_ns()
            for ev in events:
                fn(ev, ctx)
            best[(name, "new key")] = min(best[(name, "new key")], (time.perf_counter_ns() - t0) / n / 1e3)
            ev = {"order_id": "replay"}
            t0 = time.perf_counter_ns()
            for _ in range(n):
                fn(ev, ctx)
            best[(name, "replay")] = min(best[(name, "replay")], (time.perf_counter_ns() - t0) / n / 1e3)
    return {f"{name}, {case}": v for (name, case), v in best.items()}


# --------------------------------------------------------------------------- bytes
def measure_bytes() -> dict[str, float]:
    from aws_lambda_powertools import Metrics
    from aws_lambda_powertools.metrics import MetricUnit

    from emitter import Emitter, MemorySink
    from emitter.adapters import adapt_event

    event = sqs_batch()
    out: dict[str, float] = {}
    for label, full in (("5 outcomes", False), ("full path", True)):
        sink = MemorySink()
        em = Emitter(service="orders", namespace="Idempotency", sink=sink)
        recs, _ = adapt_event(event, int(time.time() * 1000))
        with em.invocation(Ctx(), operation="ProcessOrders", cold_start=False):
            if full:
                recs = em.records(event)
            five_outcomes(em, recs)
            if full:
                em.batch_item_failures([recs[3]])
        logs = [line for line in sink.lines if '"_aws"' not in line]
        emf_lines = [line for line in sink.lines if '"_aws"' in line]
        n = len(logs)
        log_bytes = sum(len(line.encode()) + 1 for line in logs)
        emf_bytes = sum(len(line.encode()) + 1 for line in emf_lines)
        out[f"{label}: outcomes"] = n
        out[f"{label}: log bytes per outcome"] = log_bytes / n
        out[f"{label}: EMF bytes per invocation"] = emf_bytes
        out[f"{label}: total bytes per outcome"] = (log_bytes + emf_bytes) / n
    buf = io.StringIO()
    real = sys.stdout
    sys.stdout = buf
    try:
        metrics = Metrics(namespace="Idempotency", service="orders")

        @metrics.log_metrics
        def h(ev, ctx):
            metrics.add_dimension(name="Operation", value="ProcessOrders")
            for name in METRICS:
                metrics.add_metric(name=name, unit=MetricUnit.Count, value=1)

        h({}, Ctx())
    finally:
        sys.stdout = real
    out["Powertools: EMF bytes per invocation (metrics only, no log records)"] = len(buf.getvalue().encode())
    return out


def baseline_folder(arg: str) -> Path:
    """``--baseline``: a folder holding an older ``emitter/``, or a git commit of this repository whose ``emitter/``
    is extracted into a temporary folder (removed at exit). Raises SystemExit when it is neither."""
    if Path(arg, "emitter").is_dir():
        return Path(arg)
    import atexit
    import shutil
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="emitter-baseline-"))
    atexit.register(shutil.rmtree, folder, True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", arg, "emitter"], check=False, capture_output=True)
    if archive.returncode != 0:
        raise SystemExit(f"--baseline {arg}: neither a folder holding emitter/ nor a commit "
                         f"({archive.stderr.decode(errors='replace').strip()})")
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    return folder


IMPORT_TARGET_MS = 8.0
"""Issue 38: ``import emitter`` costs at most 8 ms (in-process wall time of the import in a fresh process)."""
FULL_PATH_TARGET = 1.3
"""Issue 38: the full batch path costs at most 1.3x Powertools' 5-metric ``log_metrics`` handler."""

def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="20 processes, 100 batches of 40 invocations")
    ap.add_argument("--processes", type=int, default=None)
    ap.add_argument("--invocations", type=int, default=None)
    ap.add_argument("--baseline", default=None,
                    help="a git commit (or a folder holding an older emitter/): its emitter timed alongside, "
                         "interleaved")
    args = ap.parse_args()
    if args.baseline is not None:
        args.baseline = baseline_folder(args.baseline)
    processes = args.processes or (20 if args.quick else 30)
    n = args.invocations or 40
    repeats = 100 if args.quick else 400

    from importlib.metadata import version  # the alternatives' versions: their costs change between releases

    print(f"python {sys.version.split()[0]} on {os.cpu_count()} CPU(s), load average {os.getloadavg()[0]:.1f}; "
          f"aws-lambda-powertools {version('aws-lambda-powertools')}, "
          f"aws-embedded-metrics {version('aws-embedded-metrics')}\n")
    imp = measure_imports(processes, args.baseline)
    bare_wall = imp["bare interpreter"][0]
    print(f"Import time, fresh processes (median of {processes} each; 'import' columns are measured inside the fresh")
    print("process around the import statement: wall clock and CPU time, the latter less disturbed by other load)")
    print(f"  {'candidate':32} {'process ms':>11} {'- bare ms':>10} {'import ms':>10} {'import CPU ms':>14} "
          f"{'x emitter':>10}")
    em_cpu = imp["emitter"][2]
    for name, (wall, inproc, cpu) in imp.items():
        ratio = "" if name == "bare interpreter" or em_cpu <= 0 else f"{cpu / em_cpu:9.1f}x"
        print(f"  {name:32} {wall:11.1f} {wall - bare_wall:10.1f} {inproc:10.2f} {cpu:14.2f} {ratio:>10}")
    em_import = imp["emitter"][1]
    if args.baseline is not None:
        print(f"  import CPU vs the --baseline checkout, same rounds: {em_cpu / imp[BASELINE_IMPORT][2]:.3f}x")
    print(f"  target (issue 38): importing emitter costs <= {IMPORT_TARGET_MS:.0f} ms -> {em_import:.1f} ms wall "
          f"({'MET' if em_import <= IMPORT_TARGET_MS else 'MISSED'}), {em_cpu:.1f} ms CPU "
          f"({'MET' if em_cpu <= IMPORT_TARGET_MS else 'MISSED'}); load average {os.getloadavg()[0]:.1f}\n")

    inv = measure_invocations(n, repeats, args.baseline)
    pt = inv["Powertools log_metrics"]
    floor = inv["hand-written json.dumps EMF"]
    print(f"Per invocation: 10-record SQS batch, 5 outcomes, flush ({repeats} rounds of {n} invocations per "
          f"candidate; load average {os.getloadavg()[0]:.1f})")
    print(f"  {'candidate':55} {'median CPU us':>14} {'best wall us':>13} {'vs Powertools':>14} {'vs floor':>9}")
    for name, t in inv.items():
        print(f"  {name:55} {t.median_cpu:14.2f} {t.best_wall:13.2f} {t.ratio(pt):13.2f}x {t.ratio(floor):8.2f}x")
    full = inv[FULL]
    if args.baseline is not None:
        print(f"  full path vs the --baseline checkout, same rounds: {full.ratio(inv[BASELINE_FULL]):.3f}x")
    same = inv["Powertools log_metrics, same metrics as the full path"]
    ratio = full.ratio(pt)
    print(f"  target (issue 38): full path <= {FULL_PATH_TARGET}x Powertools' 5-metric handler -> {ratio:.2f}x "
          f"({'MET' if ratio <= FULL_PATH_TARGET else 'MISSED'}); {full.ratio(same):.2f}x Powertools emitting the "
          f"same metrics, {full.ratio(floor):.2f}x the hand-written floor")
    logged = inv[LOGGER_FULL]
    print(f"  full path with an active Powertools Logger (correlation id on every record): {logged.median_cpu:.2f} us, "
          f"{logged.ratio(pt):.2f}x Powertools' 5-metric handler, {logged.ratio(full):.2f}x the full path without "
          "one\n")

    idem = measure_idempotency(n, max(20, repeats // 4))
    print(f"Idempotency integration, in-memory persistence (best of {max(20, repeats // 4)} batches of {n} calls)")
    for case in ("new key", "replay"):
        bare = idem[f"bare Powertools @idempotent, {case}"]
        print(f"  {case:8} {'bare Powertools @idempotent':42} {bare:8.2f} us")
        for mode in TAKEOVER_MODES:
            inst = idem[f"instrumented, {mode}, {case}"]
            print(f"  {'':8} {'instrumented, ' + mode:42} {inst:8.2f} us  overhead {inst - bare:7.2f} us "
                  f"({inst / bare:.2f}x)")
    print("  (a DynamoDB layer needs no probe: the claim itself returns the overwritten item, ReturnValues=ALL_OLD)")
    print()

    print("Bytes written (one invocation of the workload)")
    for k, v in measure_bytes().items():
        print(f"  {k:70} {v:10.1f}")


if __name__ == "__main__":
    main()
