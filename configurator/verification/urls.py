from django.urls import URLPattern, URLResolver, path

from configurator.verification import views

app_name = "verification"
urlpatterns: list[URLPattern | URLResolver] = [
    path("quotes/<int:quote_pk>/", views.report, name="report"),
    path("quotes/<int:quote_pk>/start/", views.start, name="start"),
]
