from dashboard.views import signal

signal.render("timeout_aborts")
