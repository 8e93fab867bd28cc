"""Routes of the model lookup: ``/models/autocomplete/``."""

from django.urls import URLPattern, URLResolver, path

from configurator.modelhub import views

app_name = "modelhub"
urlpatterns: list[URLPattern | URLResolver] = [
    path("autocomplete/", views.autocomplete, name="autocomplete"),
]
