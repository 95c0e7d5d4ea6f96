"""Are the standard tables the same before and after a change? ``collect local`` of this tree and of the tree at
``--before-commit`` (default 346a573, the start of this round of [collector-core]; extracted with ``git archive``)
on the demo fleet's logs and on every shared sample (../shared/samples), each in its own process; every table's
schema and rows (sorted) are compared.

Prints one line per differing table and ``IDENTICAL (N tables)`` or exits 1. Run:
``.venv/bin/python benchmarks/collector_tables_diff.py [--before-commit SHA]``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from collector_bench import before_tree

SAMPLES = ROOT.parent / "shared" / "samples"

_CHILD = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from collector.collect import collect_local
import pyarrow.parquet as pq
out = {}
for name, path in json.loads(sys.argv[3]).items():
    o = Path(sys.argv[2]) / name
    collect_local([Path(path)], o)
    for t in sorted((o / "tables").glob("*.parquet")):
        tb = pq.read_table(t)
        out[f"{name}/{t.stem}"] = [str(tb.schema), sorted(json.dumps(r, sort_keys=True, default=str)
                                                          for r in tb.to_pylist())]
print(json.dumps(out))
"""


def tables(tree: Path, work: Path, inputs: dict[str, str]) -> dict[str, list]:
    """{input/table: [schema text, sorted rows as JSON]} of ``collect local`` run by the code in ``tree``."""
    done = subprocess.run([sys.executable, "-c", _CHILD, str(tree), str(work), json.dumps(inputs)],
                          capture_output=True, text=True, cwd=str(tree), check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before-commit", default="346a573")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="idemwatch-tables-diff-"))
    try:
        from dashboard import demo

        demo.run_demo(tmp / "demo", seed=11, events=1500)
        inputs = {"demo": str(tmp / "demo" / "logs")}
        inputs.update({f.name: str(f) for f in sorted(SAMPLES.iterdir()) if not f.name.endswith(".expected.json")})
        before = tables(before_tree(args.before_commit, tmp / "before-tree"), tmp / "before", inputs)
        after = tables(ROOT, tmp / "after", inputs)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    differ = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    for k in differ:
        b, a = before.get(k, ["-", []]), after.get(k, ["-", []])
        print(f"DIFFERS {k}: {len(b[1])} rows before, {len(a[1])} after" + ("; schema differs" if a[0] != b[0] else ""))
    if differ:
        return 1
    print(f"IDENTICAL ({len(after)} tables, before {args.before_commit})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
