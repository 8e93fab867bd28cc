"""The presales workspace, routed at ``/presales/``."""

from django.urls import path

from configurator.quotes import views

app_name = "quotes"
urlpatterns = [
    path("", views.queue, name="queue"),
    path("inquiries/<int:pk>/", views.inquiry_detail, name="inquiry"),
    path("inquiries/<int:pk>/status/", views.inquiry_status, name="inquiry_status"),
    path("inquiries/<int:pk>/quote/", views.quote_create, name="create"),
    path(
        "inquiries/<int:pk>/quote/recommended/",
        views.quote_create_recommended,
        name="create_recommended",
    ),
    path("quotes/<int:pk>/", views.quote_detail, name="detail"),
    path("quotes/<int:pk>/settings/", views.quote_settings, name="settings"),
    path("quotes/<int:pk>/issue/", views.issue, name="issue"),
    path("quotes/<int:pk>/pdf/", views.pdf, name="pdf"),
    path("lines/<int:pk>/quantity/", views.line_quantity, name="line_quantity"),
    path("lines/<int:pk>/provided/", views.line_provided, name="line_provided"),
    path("alternatives/<int:pk>/lines/", views.line_add, name="line_add"),
]
