from dashboard.views import signal

signal.render("in_progress")
