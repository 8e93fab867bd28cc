from django.apps import AppConfig


class VerificationConfig(AppConfig):
    name = "configurator.verification"

    def ready(self) -> None:
        """Quote documents carry their verification
        (:func:`configurator.verification.customer.register`)."""
        from configurator.verification import customer  # models are loaded only now

        customer.register()
