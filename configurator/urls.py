"""URL routes: the public configurator, the presales workspace, the API, the admin."""

from django.conf import settings
from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

# The admin registers its ModelAdmins here, when the URLconf is first needed (settings
# use SimpleAdminConfig, so management commands without pages skip this work).
admin.autodiscover()

urlpatterns = [
    path("", include("configurator.inquiries.urls")),
    path("presales/", include("configurator.quotes.urls")),
    path("verification/", include("configurator.verification.urls")),
    path("deployments/", include("configurator.deployments.urls")),
    path("models/", include("configurator.modelhub.urls")),
    path("api/", include("configurator.deployments.api_urls")),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("i18n/", include("django.conf.urls.i18n")),
    path(settings.ADMIN_PATH, admin.site.urls),
]
handler404 = "configurator.web.not_found"
handler500 = "configurator.web.server_error"
