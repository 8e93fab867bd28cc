from django.urls import URLPattern, URLResolver

app_name = "deployments"
urlpatterns: list[URLPattern | URLResolver] = []
