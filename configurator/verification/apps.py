from django.apps import AppConfig


class VerificationConfig(AppConfig):
    name = "configurator.verification"
