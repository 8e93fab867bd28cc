from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class QuotesConfig(AppConfig):
    name = "configurator.quotes"
    verbose_name = _("Quotes")
