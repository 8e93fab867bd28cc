from django.apps import AppConfig


class InquiriesConfig(AppConfig):
    name = "configurator.inquiries"
