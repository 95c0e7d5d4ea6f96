"""idemwatch dashboard entry point: ``streamlit run dashboard/app.py`` (use ``idemwatch dashboard``).

Loads the data (cached on the manifest), draws the shared sidebar filters, then runs
the selected page. The data directory comes from ``$IDEMWATCH_DATA``.

Adding a page: one ``st.Page(...)`` line in :data:`PAGES` (a ``dashboard/app_pages/<name>.py`` that calls
its view's ``render()``, a title, a ``url_path``); the navigation, the tests and the benchmark read the list.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from dashboard import ui
from dashboard.constants import SIGNALS

# a local file, served by streamlit itself: a ":material/...:" icon makes the browser fetch the favicon from
# fonts.gstatic.com, and the dashboard promises loopback-only traffic
FAVICON = Path(__file__).resolve().parent / "assets" / "favicon.png"
st.set_page_config(page_title="idemwatch", page_icon=str(FAVICON), layout="wide")

PAGES = {
    # the default page is served at "/" only (streamlit ignores its url_path and shows "Page not found" for
    # /<url_path>), so it gets none: every link to it is "/"
    "": [st.Page("app_pages/overview.py", title="Overview", default=True)],
    "Signals": [st.Page(s.page, title=s.title, url_path=s.key) for s in SIGNALS if s.key != "stuck"],
    "Investigate": [
        st.Page("app_pages/stuck_keys.py", title="Stuck keys", url_path="stuck"),
        st.Page("app_pages/explorer.py", title="Events explorer", url_path="explorer"),
        st.Page("app_pages/lambda_health.py", title="Lambda health", url_path="lambda"),
        st.Page("app_pages/alarms.py", title="Alarms", url_path="alarms"),
        st.Page("app_pages/configuration.py", title="Configuration", url_path="configuration"),
        st.Page("app_pages/diagnose.py", title="Diagnose", url_path="diagnose"),
    ],
}
page = st.navigation(PAGES, expanded=True)  # every page listed: no "View N more" hiding the last pages
ds = ui.build_context()
if not ds.ok:
    ui.no_data(ds)
    st.stop()
page.run()
