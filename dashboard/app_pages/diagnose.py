from dashboard.views import diagnose

diagnose.render()
