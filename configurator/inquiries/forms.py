"""The configurator's workload form, which sizes the plan (its inputs are in
:mod:`configurator.inquiries.workload_inputs`, the contact details in
:mod:`configurator.inquiries.contact`).

The workload form owns the whole validation of a sizing request: Django's field limits
first, then the sizing engine itself; an engine error is shown at the field it names.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from django.core.files.uploadedfile import UploadedFile
from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop

from configurator.inquiries import problems
from configurator.inquiries.contact import ContactForm, describe_fields
from configurator.inquiries.notices import fallback_notice
from configurator.inquiries.share_links import MAX_ECHOED_INPUT_CHARS, ShareLinks
from configurator.inquiries.traffic_fields import TRAFFIC_FIELDS
from configurator.inquiries.workload_fields import check_declared_inputs
from configurator.inquiries.workload_inputs import (
    WorkloadInputs,
    add_htmx_attrs,
)
from configurator.limits import localize_limits
from configurator.modelhub.errors import HubLookupPending
from configurator.modelhub.services import model_lookup
from configurator.modelhub.upload import (
    MAX_CONFIG_BYTES,
    UNNAMED_PRIVATE_MODEL,
    model_from_config_upload,
    private_display_name,
)
from configurator.planning.services import plan_create
from configurator.uploads import json_storable
from sizing.bom.lines import check_node
from sizing.errors import SizingError
from sizing.model.spec import ModelSpec
from sizing.plan.orchestrator import Plan
from sizing.workload import FIELDS, Workload, stored_inputs

MODEL_ERROR_FIELDS = {"weights": "model", "config": "config_file"}
"""The form field that shows an engine error on a model input that is no form field
(every :class:`Workload` field is a form field of the same name)."""


TOO_LARGE = gettext_noop(
    "The file is larger than 1 MB: upload the model's config.json, not its weights."
)
"""The error of a config.json over ``MAX_CONFIG_BYTES``, uploaded or kept."""


class WorkloadForm(ShareLinks, WorkloadInputs):
    """What the customer wants to run; ``plan`` holds the sizing once the form is valid.

    Every :class:`Workload` field is a form field of the same name whose cleaned value is
    the field's value; :meth:`workload` reads them all. ``sized`` holds the workload and
    its model once every field is clean and the model is known, also when the requested
    layout cannot be sized: the recommendation searches other layouts for it, as the
    JSON API does.
    """

    plan: Plan | None = None
    sized: tuple[Workload, ModelSpec] | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        add_htmx_attrs(type(self).base_fields)
        super().__init__(*args, **kwargs)
        self.plan = None
        self.sized = None
        self.fixes: list[problems.FixView] = []
        self.notice = ""
        self.lookup_pending = ""
        self.private_config: dict[str, Any] | None = None
        self.private_config_text = ""

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        config_text = self._private_config_text(cleaned)
        if self.errors:
            return cleaned
        try:
            # the inputs against each other before the model is looked up, as the API does
            self.workload(cleaned, model=cleaned["model"] or UNNAMED_PRIVATE_MODEL).validate()
            spec = self._model_spec(cleaned, config_text)
            workload = self.workload(cleaned, model=spec.repo_id)
            self.sized = (workload, spec)
            plan = plan_create(workload, model=spec)
            check_node(plan)
            self.plan = plan
        except HubLookupPending as exc:
            # Not an error: the Hub is being asked in the background; the page polls.
            self.lookup_pending = exc.repo_id
        except SizingError as exc:
            self._add_engine_error(exc, private=config_text is not None)
        return cleaned

    def _target(self, engine_field: str, *, private: bool) -> str:
        """The form field that shows an engine error or fix on ``engine_field``."""
        name = engine_field.split(".")[0]
        target = name if name in self.base_fields else MODEL_ERROR_FIELDS.get(name, "")
        if private and target == "model":
            return "config_file"
        return target

    def _labelled(self, engine_field: str, *, private: bool) -> tuple[str, str]:
        """The form field for ``engine_field`` and its label (``""`` when none)."""
        target = self._target(engine_field, private=private)
        return target, str(self.fields[target].label) if target else ""

    def _add_engine_error(self, exc: SizingError, *, private: bool) -> None:
        """Show ``exc`` in the active language at its field, with the fixes and the inputs
        they change (:mod:`configurator.inquiries.problems`)."""
        message = problems.error_text(exc, model=str(self.data.get("model") or "").strip())
        self.fixes = problems.fix_views(exc, lambda f: self._labelled(f, private=private))
        labels = [fix.label for fix in self.fixes if fix.label]
        if labels:
            message = f"{message} {problems.fixing_inputs(labels)}"
        self.add_error(self._target(exc.field, private=private) or None, message)

    def _private_config_text(self, cleaned: dict[str, Any]) -> str | None:
        """The config.json text of a private model, ``None`` for a Hub model.

        An upload in this request wins; without one, the text kept from an earlier
        upload (``config_text``, so a page without JavaScript can still send the quote
        request) counts while the model field is empty. Adds the field errors.
        """
        model_id = cleaned.get("model") or ""
        upload = cleaned.get("config_file")
        kept = cleaned.get("config_text") or ""
        if self.errors.pop("config_text", None) and not (upload or model_id):
            # The kept text is over the upload's limit (a page never keeps such a file):
            # the customer sees the upload's own error, at the upload.
            self.add_error("config_file", _(TOO_LARGE))
            return None
        if upload and model_id:
            self.add_error(
                "config_file",
                _(
                    "Give either a Hugging Face model id or a config.json, not both: "
                    "empty the model field to size the uploaded file."
                ),
            )
            return None
        if upload:
            return self._read_upload(upload)
        if kept and not model_id:
            return str(kept)
        if not model_id and "model" not in self.errors:
            # an id the field refused has its own error; this one is for an empty field
            self.add_error(
                "model",
                _("Enter a Hugging Face model id, or upload the config.json of a private model."),
            )
        elif cleaned.get("weights_gib") is not None:
            self.add_error(
                "weights_gib",
                _("The weights of a Hub model come from the Hub; leave this field empty."),
            )
        return None

    def _read_upload(self, upload: UploadedFile[bytes]) -> str | None:
        """The uploaded file as text, or ``None`` with a field error (size, type, encoding)."""
        if (upload.size or 0) > MAX_CONFIG_BYTES:
            self.add_error("config_file", _(TOO_LARGE))
            return None
        if not str(upload.name or "").lower().endswith(".json"):
            self.add_error(
                "config_file", _("Only a JSON file can be sized: upload the model's config.json.")
            )
            return None
        try:
            return bytes(upload.read()).decode("utf-8-sig")
        except UnicodeDecodeError:
            self.add_error(
                "config_file", _("The file is not UTF-8 text: upload the model's config.json.")
            )
            return None

    def _model_spec(self, cleaned: dict[str, Any], config_text: str | None) -> ModelSpec:
        """The model to size: the private config, or the Hub id through the model hub.

        Raises:
            SizingError: the model cannot be sized (shown at the field it names).
        """
        if config_text is None:
            resolved = model_lookup(cleaned["model"])
            self.notice = fallback_notice(resolved)
            return resolved.spec
        spec = model_from_config_upload(
            config_text=config_text,
            model_name=cleaned.get("model_name"),
            weights_gib=cleaned.get("weights_gib"),
        )
        self.private_config = json_storable(json.loads(config_text))
        self.private_config_text = config_text
        return spec

    @property
    def private_name(self) -> str:
        """The uploaded model's name for a sentence that says "private model" already
        (``""`` when the config names no model)."""
        if self.plan is None or self.private_config is None:
            return ""
        return private_display_name(self.plan.request.model.repo_id)

    @staticmethod
    def workload(cleaned: Mapping[str, Any], *, model: str) -> Workload:
        """The :class:`Workload` of the cleaned data, naming ``model`` (the resolved id);
        an empty field that has a default takes it."""
        values = {
            name: cleaned[name]
            for name in FIELDS
            if name != "model" and not (cleaned[name] in (None, "") and FIELDS[name].default)
        }
        return Workload(**values, model=model)

    def inquiry_columns(self) -> dict[str, Any]:
        """The :class:`~configurator.inquiries.models.Inquiry` columns of a valid form: the
        plan's workload (the serving engine among its fields), a private model's parsed
        config and weights."""
        assert self.plan is not None
        return stored_inputs(
            self.plan.request.workload,
            private_config=self.private_config,
            private_weights_gib=self.cleaned_data.get("weights_gib"),
        )


describe_fields(WorkloadForm.base_fields)
check_declared_inputs(WorkloadForm.base_fields)
localize_limits(WorkloadForm.base_fields.values())
# The workload fields first, then the advanced traffic fields.
WorkloadForm.base_fields = dict(
    sorted(WorkloadForm.base_fields.items(), key=lambda item: item[0] in TRAFFIC_FIELDS)
)

__all__ = ["MAX_ECHOED_INPUT_CHARS", "ContactForm", "WorkloadForm", "describe_fields"]
