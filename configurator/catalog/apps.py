from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class CatalogConfig(AppConfig):
    name = "configurator.catalog"
    verbose_name = _("Catalog")
