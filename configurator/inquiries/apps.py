from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class InquiriesConfig(AppConfig):
    name = "configurator.inquiries"
    verbose_name = _("Inquiries")
