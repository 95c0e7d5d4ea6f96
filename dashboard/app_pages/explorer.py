from dashboard.views import explorer

explorer.render()
