"""``idemwatch bundle``: the emitter alone, as a Lambda layer zip or a directory, for handlers to import.

A Lambda function needs only ``emitter`` (standard library only). Installing the whole ``idemwatch`` distribution
into a function (``pip install idemwatch -t``) brings the collector, dashboard, alarms and click: megabytes that
are never imported. The bundle holds ``emitter/*.py`` and ``emitter/py.typed`` and nothing else.

Layouts (https://docs.aws.amazon.com/lambda/latest/dg/packaging-layers.html#packaging-layers-paths):

- ``layer`` (default): ``python/emitter/...``; Lambda extracts a layer to ``/opt`` and puts ``/opt/python`` on
  ``sys.path`` for every Python runtime.
- ``function``: ``emitter/...`` at the top, to copy beside the handler in the function's own code.

A zip is reproducible: fixed timestamps and sorted entries, so the same emitter gives the same bytes.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import click

from idemwatch.terminal import echo

__all__ = ["BUNDLE_BUDGET_UNPACKED_BYTES", "BUNDLE_BUDGET_ZIP_BYTES", "BundleResult", "build_bundle", "bundle",
           "emitter_files"]

BUNDLE_BUDGET_UNPACKED_BYTES = 400 * 1024
"""Size budget of the unpacked bundle: 400 KiB (about 1/6 of the 2.4 MB a ``pip install -t`` of the whole toolkit
unpacks to). Tested; raise it only knowingly."""

BUNDLE_BUDGET_ZIP_BYTES = 128 * 1024
"""Size budget of the zipped layer: 128 KiB."""

_ZIP_TIME = (2020, 1, 1, 0, 0, 0)  # any fixed date after 1980 (zip's epoch): reproducible archives


@dataclass(frozen=True, slots=True)
class BundleResult:
    """What :func:`build_bundle` wrote: ``path``, ``files`` (count), ``unpacked_bytes`` (sum of file sizes) and
    ``written_bytes`` (the zip's size, or ``unpacked_bytes`` for a directory)."""

    path: Path
    files: int
    unpacked_bytes: int
    written_bytes: int


def emitter_files() -> list[tuple[Path, str]]:
    """The files of the installed ``emitter`` package as (source path, path relative to the package's parent),
    sorted: every ``*.py`` and ``py.typed``; no caches, no docs. Raises FileNotFoundError without py.typed."""
    import emitter

    root = Path(emitter.__file__).resolve().parent
    files = sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts
                   and (p.suffix == ".py" or p.name == "py.typed"))
    if not any(p.name == "py.typed" for p in files):
        raise FileNotFoundError(f"{root / 'py.typed'} is missing: the emitter install is incomplete")
    return [(p, p.relative_to(root.parent).as_posix()) for p in files]


def build_bundle(out: Path, layout: str = "layer", *, force: bool = False) -> BundleResult:
    """Write the emitter bundle to ``out``: a zip when ``out`` ends in ``.zip``, else a directory. ``layout`` is
    ``"layer"`` (``python/`` prefix) or ``"function"``.

    Never replaces what it did not write: an existing zip is replaced only when it is an earlier bundle (every entry
    under ``python/emitter/`` or ``emitter/``), a non-empty directory only when it holds nothing but an earlier
    bundle (``python/``, ``emitter/``). ``force=True`` replaces any existing zip, and writes into any directory
    (its ``python/`` or ``emitter/`` entry is replaced; nothing else in it is touched).

    Raises ValueError for an unknown layout or an existing ``out`` that is not an earlier bundle (without force)."""
    if layout not in ("layer", "function"):
        raise ValueError(f"unknown layout {layout!r}: expected layer or function")
    prefix = "python/" if layout == "layer" else ""
    files = emitter_files()
    unpacked = sum(src.stat().st_size for src, _ in files)
    if out.suffix == ".zip":
        if out.exists() and not force and not _is_earlier_bundle_zip(out):
            raise ValueError(f"{out} exists and is not an earlier bundle; give a new path, or --force to replace it")
        out.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
        tmp = Path(tmp_name)
        try:
            with os.fdopen(fd, "wb") as f, zipfile.ZipFile(f, "w", compression=zipfile.ZIP_DEFLATED,
                                                          compresslevel=9) as zf:
                for src, rel in files:
                    info = zipfile.ZipInfo(prefix + rel, _ZIP_TIME)
                    info.external_attr = 0o644 << 16  # readable by the Lambda runtime user
                    info.compress_type = zipfile.ZIP_DEFLATED
                    zf.writestr(info, src.read_bytes())
            tmp.chmod(0o644)  # mkstemp's 0600 would hide the layer from the tools (SAM, CDK) that upload it
            os.replace(tmp, out)
        finally:
            tmp.unlink(missing_ok=True)
        return BundleResult(out, len(files), unpacked, out.stat().st_size)
    if out.exists():
        entries = {p.name for p in out.iterdir()}
        if entries and not entries <= _BUNDLE_TOPS and not force:
            raise ValueError(f"{out} is not empty and is not an earlier bundle; give a new or empty directory, or "
                             "--force to write into it")
        for name in entries & _BUNDLE_TOPS:
            shutil.rmtree(out / name)
    for src, rel in files:
        dest = out / (prefix + rel)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dest)
    return BundleResult(out, len(files), unpacked, unpacked)


_BUNDLE_TOPS = frozenset({"python", "emitter"})


def _is_earlier_bundle_zip(path: Path) -> bool:
    """True when ``path`` is a zip whose every entry lies under ``python/emitter/`` or ``emitter/`` (what
    :func:`build_bundle` writes, in either layout)."""
    if path.is_dir() or not zipfile.is_zipfile(path):
        return False
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
    return bool(names) and all(n.startswith(("python/emitter/", "emitter/")) for n in names)


@click.command("bundle")
@click.option("--out", "out", type=click.Path(path_type=Path), default=Path("build/emitter-layer.zip"),
              show_default=True, help="A .zip path (a Lambda layer archive) or a directory.")
@click.option("--layout", type=click.Choice(["layer", "function"]), default="layer", show_default=True,
              help="layer: python/emitter/ (Lambda puts /opt/python on sys.path); function: emitter/ at the top, "
                   "to copy beside your handler.")
@click.option("--force", is_flag=True,
              help="Replace an existing --out zip that is not an earlier bundle, or write into a directory that holds "
                   "other files (only its python/ or emitter/ entry is replaced).")
def bundle(out: Path, layout: str, force: bool) -> None:
    """Write the emitter alone (its *.py and py.typed) as a Lambda layer zip or a directory, and print its size.

    An existing --out is replaced only when it is an earlier bundle, unless --force is given."""
    try:
        r = build_bundle(out, layout, force=force)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--out") from None
    kind = "zip" if out.suffix == ".zip" else "directory"
    size = f"{r.written_bytes / 1024:.1f} KiB zipped, " if kind == "zip" else ""
    echo(f"wrote {r.path} ({kind}, {layout} layout): {r.files} files, {size}{r.unpacked_bytes / 1024:.1f} KiB "
               "unpacked")
