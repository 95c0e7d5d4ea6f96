from dashboard.views import signal

signal.render("conflicts")
