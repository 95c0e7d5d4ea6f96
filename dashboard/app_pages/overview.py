from dashboard.views import overview

overview.render()
