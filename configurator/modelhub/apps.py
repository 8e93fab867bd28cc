from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ModelhubConfig(AppConfig):
    name = "configurator.modelhub"
    verbose_name = _("Model Hub")
