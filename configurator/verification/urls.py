from django.urls import URLPattern, URLResolver

app_name = "verification"
urlpatterns: list[URLPattern | URLResolver] = []
