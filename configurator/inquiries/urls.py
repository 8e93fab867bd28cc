"""Public routes: the configurator at the site root, the quote request, the privacy notice."""

from django.urls import path

from configurator.inquiries import views

app_name = "inquiries"
urlpatterns = [
    path("", views.configurator, name="configurator"),
    path("estimate/", views.estimate, name="estimate"),
    path("estimate/traffic/", views.estimate_traffic, name="estimate_traffic"),
    path("estimate/upload/", views.config_upload, name="config_upload"),
    path("recommendations/", views.recommendations, name="recommendations"),
    path("quote/", views.quote_request, name="quote"),
    path("quote/thanks/", views.thanks, name="thanks"),
    path("privacy/", views.privacy, name="privacy"),
]
