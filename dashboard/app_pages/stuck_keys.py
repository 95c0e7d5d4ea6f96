from dashboard.views import stuck

stuck.render()
