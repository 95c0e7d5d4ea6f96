"""``idemwatch bundle``: the emitter alone, within its size budget, importable with nothing else on sys.path."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from collector.bundle import BUNDLE_BUDGET_UNPACKED_BYTES, BUNDLE_BUDGET_ZIP_BYTES, build_bundle
from idemwatch.cli import main

REPO = Path(__file__).resolve().parents[3]

HANDLER = '''
from emitter import Emitter

em = Emitter(service="orders")

@em.handler(operation="ProcessOrders")
def handler(event, context):
    failed = []
    for rec in em.records(event):
        key = rec.idempotency_key or rec.event_id
        if rec.event_id == "m2":
            em.duplicate_completed(rec, key)
        elif rec.event_id == "m3":
            failed.append(rec)
            em.failure(TimeoutError("downstream"), rec, key)
        else:
            em.succeeded(rec, key)
    return em.batch_item_failures(failed)
'''

RUNNER = '''
import json, sys
sys.path[:0] = [sys.argv[1], sys.argv[2]]   # the bundle, then the handler's folder: nothing else
import handler
event = {"Records": [{"messageId": f"m{i}", "eventSource": "aws:sqs", "body": "{}",
                      "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:orders",
                      "attributes": {"ApproximateReceiveCount": "1", "SentTimestamp": "1767607200000"}}
                     for i in (1, 2, 3)]}
result = handler.handler(event, {"aws_request_id": "r1", "function_name": "orders-consumer",
                                 "remaining_time_ms": 30000})
extra = sorted({m.split(".")[0] for m in sys.modules} - set(sys.stdlib_module_names) - {"emitter", "handler", "__main__"})
print(json.dumps({"result": result, "non_stdlib_modules": extra, "emitter_from": sys.modules["emitter"].__file__}),
      file=sys.stderr)
'''


def _expected_files() -> list[str]:
    root = REPO / "emitter"
    return sorted(p.relative_to(REPO).as_posix() for p in root.rglob("*")
                  if p.is_file() and "__pycache__" not in p.parts and (p.suffix == ".py" or p.name == "py.typed"))


def test_cli_writes_a_layer_zip_within_budget(tmp_path):
    out = tmp_path / "layer.zip"
    res = CliRunner().invoke(main, ["bundle", "--out", str(out)])
    assert res.exit_code == 0, res.output
    with zipfile.ZipFile(out) as zf:
        names = sorted(zf.namelist())
        unpacked = sum(i.file_size for i in zf.infolist())
        assert zf.testzip() is None
    assert names == ["python/" + f for f in _expected_files()]
    assert "python/emitter/py.typed" in names
    assert unpacked == sum((REPO / f).stat().st_size for f in _expected_files())
    size = out.stat().st_size
    # the budget (docs/install.md): 400 KiB unpacked, 128 KiB zipped; the whole toolkit unpacks to 2.4 MB and more
    assert unpacked <= BUNDLE_BUDGET_UNPACKED_BYTES and size <= BUNDLE_BUDGET_ZIP_BYTES, (unpacked, size)
    assert res.output == (f"wrote {out} (zip, layer layout): {len(names)} files, {size / 1024:.1f} KiB zipped, "
                          f"{unpacked / 1024:.1f} KiB unpacked\n")


def test_zip_is_reproducible(tmp_path):
    a, b = build_bundle(tmp_path / "a.zip"), build_bundle(tmp_path / "b.zip")
    assert (tmp_path / "a.zip").read_bytes() == (tmp_path / "b.zip").read_bytes()
    assert a.files == b.files and a.written_bytes == b.written_bytes


@pytest.mark.parametrize(("layout", "prefix"), [("layer", "python/"), ("function", "")])
def test_directory_layouts_and_rebuild(tmp_path, layout, prefix):
    out = tmp_path / "bundle"
    r = build_bundle(out, layout)
    got = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert got == [prefix + f for f in _expected_files()] and r.files == len(got)
    (out / (prefix + "emitter") / "stale.py").write_text("x = 1\n")  # a file from an older emitter
    build_bundle(out, layout)  # replaces the earlier bundle whole
    assert not (out / (prefix + "emitter") / "stale.py").exists()


def test_refuses_a_directory_that_is_not_a_bundle(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("")
    with pytest.raises(ValueError, match="not an earlier bundle"):
        build_bundle(tmp_path / "src")
    assert (tmp_path / "src" / "app.py").exists()
    with pytest.raises(ValueError, match="unknown layout"):
        build_bundle(tmp_path / "x.zip", "zipapp")


def _user_zip(path: Path) -> bytes:
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("photos/2026/beach.jpg", b"not a bundle")
    return path.read_bytes()


@pytest.mark.parametrize("kind", ["user zip", "not a zip", "zip of another emitter folder"])
def test_never_overwrites_a_zip_it_did_not_write(tmp_path, kind):
    out = tmp_path / "existing.zip"
    if kind == "user zip":
        before = _user_zip(out)
    elif kind == "not a zip":
        out.write_bytes(before := b"%PDF-1.7 a document that happens to end in .zip")
    else:
        with zipfile.ZipFile(out, "w") as zf:
            zf.writestr("python/emitter/__init__.py", b"")
            zf.writestr("python/other/__init__.py", b"")  # not only the emitter: someone else's layer
        before = out.read_bytes()
    (tmp_path / "existing.zip.tmp").write_bytes(b"the user's own file")
    res = CliRunner().invoke(main, ["bundle", "--out", str(out)])
    assert res.exit_code == 2
    assert res.stderr == (f"Error: Invalid value for --out: {out} exists and is not an earlier bundle; give a new "
                          "path, or --force to replace it (see 'idemwatch bundle --help')\n")
    assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["existing.zip", "existing.zip.tmp"]  # no temp file left
    assert (tmp_path / "existing.zip.tmp").read_bytes() == b"the user's own file"
    res = CliRunner().invoke(main, ["bundle", "--out", str(out), "--force"])
    assert res.exit_code == 0, res.output
    with zipfile.ZipFile(out) as zf:
        assert sorted(zf.namelist()) == ["python/" + f for f in _expected_files()]
    assert (tmp_path / "existing.zip.tmp").read_bytes() == b"the user's own file"


def test_replaces_an_earlier_bundle_zip_of_either_layout(tmp_path):
    out = tmp_path / "layer.zip"
    build_bundle(out, "function")
    build_bundle(out, "layer")  # an earlier bundle (another layout): replaced without --force
    with zipfile.ZipFile(out) as zf:
        assert sorted(zf.namelist()) == ["python/" + f for f in _expected_files()]
    assert out.stat().st_mode & 0o777 == 0o644
    assert sorted(p.name for p in tmp_path.iterdir()) == ["layer.zip"]


def test_force_writes_into_a_directory_and_touches_nothing_else(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("print('handler')\n")
    res = CliRunner().invoke(main, ["bundle", "--out", str(tmp_path / "src"), "--layout", "function", "--force"])
    assert res.exit_code == 0, res.output
    got = sorted(p.relative_to(tmp_path / "src").as_posix() for p in (tmp_path / "src").rglob("*") if p.is_file())
    assert got == sorted(["app.py", *_expected_files()])
    assert (tmp_path / "src" / "app.py").read_text() == "print('handler')\n"


def test_handler_runs_on_the_bundle_alone_in_a_clean_interpreter(tmp_path):
    build_bundle(tmp_path / "layer.zip")
    opt = tmp_path / "opt"  # where Lambda extracts a layer
    with zipfile.ZipFile(tmp_path / "layer.zip") as zf:
        zf.extractall(opt)
    task = tmp_path / "task"
    task.mkdir()
    (task / "handler.py").write_text(HANDLER)
    (tmp_path / "run.py").write_text(RUNNER)
    # -I: no PYTHONPATH, no user site, script dir not trusted; -S: no site-packages at all
    p = subprocess.run([sys.executable, "-I", "-S", str(tmp_path / "run.py"), str(opt / "python"), str(task)],
                       capture_output=True, text=True, timeout=60, cwd=tmp_path, check=False)
    assert p.returncode == 0, p.stderr
    info = json.loads(p.stderr.strip().splitlines()[-1])
    assert info["result"] == {"batchItemFailures": [{"itemIdentifier": "m3"}]}
    assert info["non_stdlib_modules"] == []
    assert Path(info["emitter_from"]).is_relative_to(opt / "python")
    lines = [json.loads(ln) for ln in p.stdout.splitlines()]
    outcomes = sorted(r["outcome"] for r in lines if "outcome" in r and r["outcome"] != "cold_start")
    assert outcomes.count("received") == 3 and outcomes.count("succeeded") == 1
    assert outcomes.count("duplicate_completed") == 1
    (emf,) = [r for r in lines if "_aws" in r]
    assert (emf["EventsReceived"], emf["EventsSucceeded"], emf["DuplicateCompleted"]) == (3, 1, 1)
    assert emf["_aws"]["CloudWatchMetrics"][0]["Namespace"] == "Idempotency"
