"""The workload form's inputs: one form field per :class:`sizing.workload.Workload` field
of the same name but the traffic inputs (:mod:`configurator.inquiries.traffic_fields`), the
private model's config.json upload, and the choices and model suggestions they offer;
:class:`~configurator.inquiries.forms.WorkloadForm` validates them."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from django import forms
from django.urls import NoReverseMatch, reverse
from django.utils.translation import gettext_lazy as _

from configurator.inquiries.traffic_fields import TrafficFields
from configurator.inquiries.workload_fields import limits
from configurator.modelhub.upload import MAX_CONFIG_BYTES
from sizing.hardware import catalog
from sizing.hardware.chassis import server_gpu
from sizing.model.spec import catalog_ids
from sizing.workload import DEFAULT_GPU, FIELDS, SEED_WORKLOAD

SEED_MODEL = SEED_WORKLOAD.model
"""The sizing article's worked example, offered as the placeholder."""

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


@cache
def gpu_choices() -> tuple[tuple[str, str], ...]:
    """GPUs the engine knows that a chassis the builder sells takes, largest memory first
    (``sizing.hardware.catalog.gpus``; :func:`sizing.hardware.chassis.server_gpu`: not the
    flow-through RTX PRO
    6000 Workstation Edition nor open-air consumer cards)."""
    known = (g for g in catalog.gpus().values() if server_gpu(g))
    gpus = sorted(known, key=lambda g: (-g.marketed_memory_gb, g.name))
    return tuple((g.slug, g.name) for g in gpus)


@cache
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


@cache
def upload_attrs() -> dict[str, str]:
    """htmx attributes that send a chosen config.json in its own multipart request, with
    the configurator's other inputs, and show the estimate it gives (``consume``: the
    choice does not also trigger the live estimate, which posts the form url-encoded
    without the file).

    The file input belongs to the form ``config-upload`` (its ``form`` attribute), which a
    browser without JavaScript submits with its own button.
    """
    try:
        url = reverse("inquiries:config_upload")
    except NoReverseMatch:
        return {}
    return {
        "hx-post": url,
        "hx-trigger": "input consume",
        "hx-encoding": "multipart/form-data",
        "hx-include": "#configurator",
        "hx-target": "#estimate",
        "hx-swap": "outerHTML",
    }


def add_htmx_attrs(fields: Mapping[str, forms.Field]) -> None:
    """Give the model input of ``fields`` (a form class's) the :func:`autocomplete_attrs`
    and the config.json input the :func:`upload_attrs`, once: the URLs are known only once
    the URLconf is loaded, after this module."""
    for name, attrs in (("model", autocomplete_attrs), ("config_file", upload_attrs)):
        widget_attrs = fields[name].widget.attrs
        if "hx-post" not in widget_attrs and "hx-get" not in widget_attrs:
            widget_attrs.update(attrs())


def model_suggestions() -> tuple[str, ...]:
    """Model ids offered while typing: the bundled offline catalog."""
    return catalog_ids()


class SharePercentField(forms.IntegerField):
    """A share of the users entered in whole percent (1 to 100); it cleans to the share
    :attr:`Workload.active_share` takes (30 → 0.3), ``None`` when left empty."""

    def clean(self, value: Any) -> float | None:
        percent = super().clean(value)
        return None if percent is None else percent / 100


class WorkloadInputs(TrafficFields):
    """The customer's workload as entered: the model (a Hub id, or a private model's
    config.json with its optional name and weights) and a field for each other
    :class:`~sizing.workload.Workload` field, with the traffic fields of
    :class:`TrafficFields`."""

    model = forms.CharField(
        label=_("Model"),
        max_length=200,
        required=False,
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
    config_file = forms.FileField(
        label=_("The model's config.json"),
        required=False,
        help_text=_("A JSON file of at most 1 MB; leave the model field empty"),
        widget=forms.FileInput(attrs={"accept": ".json,application/json", "form": "config-upload"}),
    )
    model_name = forms.CharField(
        label=_("Name of the private model (optional)"),
        max_length=200,
        required=False,
    )
    weights_gib = forms.FloatField(
        label=_("Weights in GiB (optional)"),
        required=False,
        help_text=_("Empty: derived from the parameter count in the config"),
        widget=forms.NumberInput(attrs={"inputmode": "decimal", "step": "any"}),
    )
    config_text = forms.CharField(
        required=False, max_length=MAX_CONFIG_BYTES, widget=forms.HiddenInput
    )
    context_tokens = forms.IntegerField(
        label=_("Context per conversation (tokens)"),
        **limits("context_tokens"),
        initial=8192,
        widget=forms.NumberInput(attrs={"inputmode": "numeric"}),
    )
    users = forms.IntegerField(
        label=_("Number of users"),
        **limits("users"),
        initial=100,
        help_text=_("Users whose conversation should stay warm"),
        widget=forms.NumberInput(attrs={"inputmode": "numeric"}),
    )
    active_share = SharePercentField(
        label=_("Users active at once (%)"),
        min_value=1,
        max_value=100,
        required=False,
        help_text=_("Leave empty when users take turns; given, they must all fit on the GPUs"),
        widget=forms.NumberInput(attrs={"inputmode": "numeric"}),
    )
    shared_prompt_tokens = forms.IntegerField(
        label=_("Shared system prompt (tokens)"),
        **limits("shared_prompt_tokens"),
        initial=0,
        widget=forms.NumberInput(attrs={"inputmode": "numeric"}),
    )
    kv_dtype = forms.ChoiceField(
        label=_("KV-cache dtype"), choices=KV_DTYPE_CHOICES, initial=FIELDS["kv_dtype"].default
    )
    gpu = forms.ChoiceField(
        label=_("GPU"),
        choices=gpu_choices,
        initial=DEFAULT_GPU,
        help_text=_(
            "Server GPUs only: the RTX PRO 6000 Workstation Edition and consumer cards have "
            "desktop coolers that a rack server does not take."
        ),
    )
    gpus_per_node = forms.IntegerField(
        label=_("GPUs per node"),
        **limits("gpus_per_node"),
        initial=FIELDS["gpus_per_node"].default,
        widget=forms.NumberInput(attrs={"inputmode": "numeric"}),
    )
    tensor_parallel_size = forms.IntegerField(
        label=_("Tensor parallel size"),
        **limits("tensor_parallel_size"),
        required=False,
        help_text=_("Leave empty to let the plan choose the smallest that holds a conversation"),
        widget=forms.NumberInput(attrs={"inputmode": "numeric"}),
    )
    expert_parallel = forms.BooleanField(
        label=_("Expert parallel (MoE models)"),
        required=False,
        help_text=_("Spreads the experts of a MoE model over the node's GPUs"),
    )
    max_host_memory_gb = forms.IntegerField(
        label=_("Most host memory per node (GB)"),
        **limits("max_host_memory_gb"),
        required=False,
        help_text=_(
            "Leave empty to keep every user's conversation warm; a smaller DIMM layout "
            "caps the CPU tier and lowers its hit rate"
        ),
        widget=forms.NumberInput(attrs={"inputmode": "numeric"}),
    )
    without_shared_tier = forms.BooleanField(
        label=_("No shared NFS/S3 tier"),
        required=False,
        help_text=_(
            "Several nodes otherwise share one storage tier; without it, returning users "
            "whose conversation is not in their node's tiers are recomputed"
        ),
    )
    without_nvme_tier = forms.BooleanField(
        label=_("No NVMe tier"),
        required=False,
        help_text=_(
            "Plans no NVMe tier whatever the new conversations per day; returning users "
            "whose conversation is not in the other tiers are recomputed"
        ),
    )
    without_cpu_tier = forms.BooleanField(
        label=_("No CPU-memory tier"),
        required=False,
        help_text=_(
            "Plans the GPUs the targets need without offloading (and so without an NVMe "
            "tier); returning users whose conversation is not on the GPUs are recomputed"
        ),
    )
    serving_engine = forms.ChoiceField(
        label=_("Serving engine"), choices=ENGINE_CHOICES, required=False
    )
    new_conversations_per_day = forms.IntegerField(
        label=_("New conversations per day"),
        **limits("new_conversations_per_day"),
        initial=0,
        help_text=_("Sizes the NVMe tier; 0 leaves it out"),
        widget=forms.NumberInput(attrs={"inputmode": "numeric"}),
    )
