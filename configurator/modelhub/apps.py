from django.apps import AppConfig


class ModelhubConfig(AppConfig):
    name = "configurator.modelhub"
