from dashboard.views import configuration

configuration.render()
