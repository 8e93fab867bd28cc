from django.urls import URLPattern, URLResolver, path

from configurator.deployments import views

app_name = "deployments"
urlpatterns: list[URLPattern | URLResolver] = [
    path("quotes/<int:pk>/bundle.zip", views.quote_bundle, name="quote_bundle"),
]
