from dashboard.views import alarms

alarms.render()
