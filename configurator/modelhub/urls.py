from django.urls import URLPattern, URLResolver

app_name = "modelhub"
urlpatterns: list[URLPattern | URLResolver] = []
