"""The configurator's forms: the workload (which sizes the plan) and the contact details.

The workload form owns the whole validation of a sizing request: Django's field limits
first, then the sizing engine itself; an engine error is shown at the field it names.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django import forms
from django.http import QueryDict
from django.urls import NoReverseMatch, reverse
from django.utils.functional import lazy
from django.utils.translation import gettext_lazy as _

from configurator.planning.services import plan_create
from sizing import catalog
from sizing.errors import InfeasibleError, SizingError
from sizing.model import catalog_ids
from sizing.plan import MAX_CONTEXT_TOKENS, MAX_GPUS_PER_NODE, MAX_USERS, Plan

SEED_MODEL = "Qwen/Qwen3-32B-FP8"
"""The seed document's worked example, offered as the placeholder."""

ENGINE_CHOICES = [
    ("", _("Not decided yet")),
    ("vllm", "vLLM"),
    ("lmcache", "vLLM + LMCache"),
    ("sglang", "SGLang"),
    ("dynamo", "NVIDIA Dynamo"),
]

KV_DTYPE_CHOICES = [
    ("fp8", _("FP8 (1 byte per value)")),
    ("auto", _("16-bit, as the model (2 bytes per value)")),
]

ENGINE_FIELDS = {
    "model": "model",
    "weights": "model",
    "context": "context_tokens",
    "context_tokens": "context_tokens",
    "users": "users",
    "gpu": "gpu",
    "gpus_per_node": "gpus_per_node",
    "kv_dtype": "kv_dtype",
    "new_conversations_per_day": "new_conversations_per_day",
    "active_share": "active_share_percent",
    "shared_prompt_tokens": "system_prompt_tokens",
}
"""Which form field shows an engine error, by the error's ``field``."""


def gpu_choices() -> list[tuple[str, str]]:
    """GPUs the engine knows, largest memory first (``sizing.catalog.gpus``)."""
    gpus = sorted(catalog.gpus().values(), key=lambda g: (-g.marketed_memory_gb, g.name))
    return [(g.slug, g.name) for g in gpus]


def autocomplete_attrs() -> dict[str, str]:
    """htmx attributes that refresh the model suggestions from the model hub as one types.

    The hub answers ``GET ?model=...`` with ``<option>`` elements for the datalist
    (``modelhub:autocomplete``); without it the bundled catalog list stays.
    """
    try:
        url = reverse("modelhub:autocomplete")
    except NoReverseMatch:
        return {}
    return {
        "hx-get": url,
        "hx-trigger": "input changed delay:200ms",
        "hx-target": "#model-options",
        "hx-swap": "innerHTML",
        "hx-include": "this",
        "hx-sync": "this:replace",
    }


def model_suggestions() -> tuple[str, ...]:
    """Model ids offered while typing: the bundled offline catalog."""
    return catalog_ids()


def describe_fields(form: forms.Form) -> None:
    """Point every input at its help text and its error slot (``aria-describedby``)."""
    for name, field in form.fields.items():
        ids = [f"id_{name}_helptext"] if field.help_text else []
        ids.append(f"id_{name}_error")
        field.widget.attrs["aria-describedby"] = " ".join(ids)


class WorkloadForm(forms.Form):
    """What the customer wants to run; ``plan`` holds the sizing once the form is valid."""

    model = forms.CharField(
        label=_("Model"),
        max_length=200,
        help_text=_("Hugging Face id, for example Qwen/Qwen3-32B-FP8"),
        widget=forms.TextInput(
            attrs={
                "list": "model-options",
                "autocomplete": "off",
                "spellcheck": "false",
                "placeholder": SEED_MODEL,
            }
        ),
    )
    context_tokens = forms.IntegerField(
        label=_("Context per conversation (tokens)"),
        min_value=1,
        max_value=MAX_CONTEXT_TOKENS,
        initial=8192,
        widget=forms.NumberInput(attrs={"inputmode": "numeric"}),
    )
    users = forms.IntegerField(
        label=_("Number of users"),
        min_value=1,
        max_value=MAX_USERS,
        initial=100,
        help_text=_("Users whose conversation should stay warm"),
        widget=forms.NumberInput(attrs={"inputmode": "numeric"}),
    )
    active_share_percent = forms.IntegerField(
        label=_("Users active at once (%)"),
        min_value=1,
        max_value=100,
        required=False,
        help_text=_("Leave empty when users take turns; given, they must all fit on the GPUs"),
        widget=forms.NumberInput(attrs={"inputmode": "numeric"}),
    )
    system_prompt_tokens = forms.IntegerField(
        label=_("Shared system prompt (tokens)"),
        min_value=0,
        max_value=MAX_CONTEXT_TOKENS,
        initial=0,
        widget=forms.NumberInput(attrs={"inputmode": "numeric"}),
    )
    kv_dtype = forms.ChoiceField(label=_("KV-cache dtype"), choices=KV_DTYPE_CHOICES, initial="fp8")
    gpu = forms.ChoiceField(
        label=_("GPU"), choices=lazy(gpu_choices, list)(), initial="rtx-pro-6000-se"
    )
    gpus_per_node = forms.IntegerField(
        label=_("GPUs per node"),
        min_value=1,
        max_value=MAX_GPUS_PER_NODE,
        initial=4,
        widget=forms.NumberInput(attrs={"inputmode": "numeric"}),
    )
    serving_engine = forms.ChoiceField(
        label=_("Serving engine"), choices=ENGINE_CHOICES, required=False
    )
    new_conversations_per_day = forms.IntegerField(
        label=_("New conversations per day"),
        min_value=0,
        max_value=MAX_USERS * 100,
        initial=0,
        help_text=_("Sizes the NVMe tier; 0 leaves it out"),
        widget=forms.NumberInput(attrs={"inputmode": "numeric"}),
    )

    plan: Plan | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.plan = None
        self.fixes: tuple[str, ...] = ()
        describe_fields(self)
        self.fields["model"].widget.attrs.update(autocomplete_attrs())

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        tokens = cleaned.get("context_tokens")
        prompt = cleaned.get("system_prompt_tokens")
        if tokens is not None and prompt is not None and prompt > tokens:
            self.add_error(
                "system_prompt_tokens",
                _("The shared system prompt cannot be longer than the context."),
            )
        if self.errors:
            return cleaned
        try:
            self.plan = plan_create(**self.plan_arguments(cleaned))
        except SizingError as exc:
            if isinstance(exc, InfeasibleError):
                self.fixes = exc.fixes
            self.add_error(ENGINE_FIELDS.get(exc.field.split(".")[0]), exc.message)
        return cleaned

    @classmethod
    def defaults(cls) -> dict[str, str]:
        """Form data of the default workload: each field's initial value, ``""`` where none."""
        return {
            name: "" if field.initial is None else str(field.initial)
            for name, field in cls.base_fields.items()
        }

    @classmethod
    def from_query(cls, query: QueryDict) -> WorkloadForm:
        """A form bound to a shared link's parameters, the missing ones from :meth:`defaults`.

        Unbound when the query names no workload field (the plain page).
        """
        given = {name: query[name] for name in cls.base_fields if name in query}
        if not given:
            return cls()
        return cls({**cls.defaults(), **given})

    SHARE_ALWAYS = ("model", "context_tokens", "users")
    """Fields every share link names; the others only where they differ from the default."""

    def share_query(self) -> str:
        """The current inputs as a query string for a link to this estimate (``""``: none).

        The link names the model, context and users, and every other field whose value
        differs from :meth:`defaults`; :meth:`from_query` reads it back.
        """
        if not self.is_bound:
            return ""
        defaults = self.defaults()
        pairs = []
        for name in self.fields:
            value = str(self.data.get(name, "")).strip()
            if name in self.SHARE_ALWAYS or value != defaults[name]:
                pairs.append((name, value))
        return urlencode(pairs)

    @staticmethod
    def plan_arguments(cleaned: dict[str, Any]) -> dict[str, Any]:
        """Keyword arguments of ``plan_create`` from the cleaned data."""
        return {
            "model_id": cleaned["model"],
            "context_tokens": cleaned["context_tokens"],
            "users": cleaned["users"],
            "gpu_slug": cleaned["gpu"],
            "gpus_per_node": cleaned["gpus_per_node"],
            "kv_dtype": cleaned["kv_dtype"],
            "new_conversations_per_day": cleaned["new_conversations_per_day"],
            "active_share": (
                None
                if cleaned.get("active_share_percent") is None
                else cleaned["active_share_percent"] / 100
            ),
            "shared_prompt_tokens": cleaned["system_prompt_tokens"],
        }


class ContactForm(forms.Form):
    """Who asks for the quote. ``website`` is a honeypot: people never see it."""

    name = forms.CharField(label=_("Name"), max_length=200)
    company = forms.CharField(label=_("Company"), max_length=200)
    email = forms.EmailField(label=_("Email"))
    phone = forms.CharField(
        label=_("Phone (optional)"),
        max_length=40,
        required=False,
        widget=forms.TextInput(attrs={"type": "tel", "autocomplete": "tel"}),
    )
    message = forms.CharField(
        label=_("Message"),
        max_length=5000,
        required=False,
        widget=forms.Textarea(attrs={"rows": 4}),
    )
    consent = forms.BooleanField(label=_("I agree that my details are processed"), required=True)
    website = forms.CharField(
        label=_("Leave this field empty"),
        required=False,
        widget=forms.TextInput(attrs={"tabindex": "-1", "autocomplete": "off"}),
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        describe_fields(self)

    def clean_website(self) -> str:
        value: str = self.cleaned_data.get("website", "")
        if value:
            raise forms.ValidationError(_("This request looks automated and was not sent."))
        return value
