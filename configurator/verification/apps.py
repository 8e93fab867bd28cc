from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class VerificationConfig(AppConfig):
    name = "configurator.verification"
    verbose_name = _("Verification")

    def ready(self) -> None:
        """Quote documents carry their verification
        (:func:`configurator.verification.customer.register`)."""
        from configurator.verification import customer  # models are loaded only now

        customer.register()
