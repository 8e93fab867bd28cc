from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class DeploymentsConfig(AppConfig):
    name = "configurator.deployments"
    verbose_name = _("Deployment bundles")
