"""``idemwatch dashboard --data DIR [--port P]``."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("dashboard")
@click.option("--data", "data_dir", type=click.Path(file_okay=False, path_type=Path), default=Path("idemwatch-data"),
              show_default=True, help="Data directory written by `idemwatch collect` or `idemwatch demo`.")
@click.option("--port", type=click.IntRange(1, 65535), default=None, help="Port on 127.0.0.1 (default: a free one).")
@click.option("--open-browser/--no-open-browser", default=False, show_default=True,
              help="Let streamlit open a browser tab.")
def dashboard(data_dir: Path, port: int | None, open_browser: bool) -> None:
    """Serve the dashboard over collected tables on 127.0.0.1."""
    from dashboard.exceptions import DashboardStartError
    from dashboard.serve import serve

    if not (data_dir / "tables").is_dir():
        click.echo(f"note: {data_dir} has no collected tables yet; the dashboard will show how to get data "
                   f"(e.g. `idemwatch demo --out {data_dir} --no-serve`).", err=True)
    try:
        rc = serve(data_dir, port=port, headless=not open_browser)
    except DashboardStartError as exc:
        raise click.ClickException(str(exc)) from exc
    raise SystemExit(rc)
