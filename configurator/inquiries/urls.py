from django.urls import URLPattern, URLResolver

app_name = "inquiries"
urlpatterns: list[URLPattern | URLResolver] = []
