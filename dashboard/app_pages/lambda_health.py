from dashboard.views import lambda_health

lambda_health.render()
