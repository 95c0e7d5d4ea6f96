from dashboard.views import signal

signal.render("iterator_age")
