"""``{% plan_estimate %}``: the live estimate's section for a plan, in one step.

What the estimate partial shows under its title when there is a plan: the notices, the
verdict with its notes, the traffic assumptions, the figures, the tier chart, the TTFT
chart, the traffic charts (or their placeholder for the live estimate), the share link
and the notes on active users and a shared prompt. The live estimate renders it on every
keystroke; built with Python it costs a fraction of the template's nodes, with the same
markup:

- fixed phrases are translated into the active language once per language
  (:class:`~configurator.inquiries.explain.words.Words`) and printed as
  ``{% translate %}`` prints them, sentences with values filled in as
  ``{% blocktranslate trimmed %}`` fills them (each value localized and escaped, the
  English when a translation does not fit its values);
- every other value is printed as ``{{ value }}`` prints it
  (:func:`~django.template.base.render_value_in_context`: localized, escaped);
- the TTFT chart and the traffic assumptions depend only on the language and their
  figures: each is rendered from its template once per process for a language and key
  (:data:`KEPT_FRAGMENTS` entries at most), as the page's fragment cache kept them.

The view's context names read here are those :func:`configurator.inquiries.views.
_estimate_context` sets.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django import template
from django.contrib.humanize.templatetags.humanize import intcomma
from django.template.base import render_value_in_context
from django.template.context import Context
from django.template.defaultfilters import floatformat
from django.utils import translation
from django.utils.safestring import SafeString

from configurator.inquiries.explain.words import words
from configurator.inquiries.templatetags.kept import Kept
from configurator.inquiries.templatetags.markup import escaped, figure_items
from configurator.inquiries.templatetags.note_sentences import note_items
from configurator.inquiries.templatetags.tier_chart import tier_chart

register = template.Library()

KEPT_FRAGMENTS = 512
"""How many rendered TTFT charts and traffic assumptions a process keeps (each a few KB)."""

_kept = Kept(KEPT_FRAGMENTS)


def _kept_fragment(kind: str, key: str, render: Callable[[], str]) -> str:
    """The fragment ``kind`` for ``key`` in the active language, rendered by ``render``
    the first time (:class:`~configurator.inquiries.templatetags.kept.Kept`)."""
    return _kept.get((kind, translation.get_language() or "", key), render)


def _included(context: Context, name: str) -> str:
    """The template ``name`` rendered with ``context``, as ``{% include name %}`` does."""
    assert context.template is not None, "rendered by a template"
    return str(context.template.engine.get_template(name).render(context))


def _filled(gettext: Callable[[str], str], message: str, context: Context, **values: Any) -> str:
    """``message`` translated and filled with ``values`` (each printed as ``{{ value }}``
    prints it), as ``{% blocktranslate trimmed with … %}`` fills it: the English when
    the translation does not fit the values."""
    data = {name: render_value_in_context(value, context) for name, value in values.items()}
    try:
        return gettext(message) % data
    except (KeyError, ValueError):
        return message % data


def _shown(value: Any, context: Context) -> str:
    """``value`` as ``{{ value }}`` prints it; a text escaped directly."""
    if type(value) is str:
        return escaped(value) if context.autoescape else value
    return render_value_in_context(value, context)


@register.simple_tag(takes_context=True)
def plan_estimate(context: Context) -> SafeString:
    """The estimate's markup for the plan in ``context`` (see the module)."""
    language = translation.get_language()
    _ = words(language).gettext if language else translation.gettext
    get = context.get
    private = get("private")
    parts = ["\n        "]
    notice = get("notice")
    if notice:
        parts.append(f'<p class="notice hub-notice" role="status">{_shown(notice, context)}</p>')
    parts.append("\n        ")
    if private:
        name = get("private_name")
        if name:
            text = _filled(
                _,
                "Private model %(name)s: sized from the uploaded config.json; a quote "
                "request sends the file with it.",
                context,
                name=name,
            )
        else:
            text = _(
                "Private model: sized from the uploaded config.json; a quote request sends "
                "the file with it."
            )
        parts.append(f'<p class="notice private-model">{text}</p>')
    parts.append("\n        ")
    assumptions = get("assumptions")
    if assumptions:
        lead = _("The estimate rests on defaults the model's config.json leaves open:")
        items = "".join([f"<li>{_shown(text, context)}</li>" for text in assumptions])
        parts.append(
            f'<div class="notice assumptions" role="status"><p>{lead}</p>'
            f"\n          <ul>{items}</ul></div>"
        )
    pays = get("offload_pays")
    verdict = (
        _("Offloading the KV cache pays here.") if pays else _("Offloading does not pay here.")
    )
    reasons = note_items(context, context["reasons"], "<li>", "</li>")
    warnings = note_items(context, context["warnings"], '<p class="warning">', "</p>")
    parts.append(
        f'\n        <div class="verdict {"pays" if pays else "not-pays"}">'
        f"\n          <p><strong>{verdict}</strong></p>"
        f"\n          <ul>{reasons}</ul>"
        f"\n          {warnings}"
        "\n        </div>\n        "
    )
    parts.append(
        _kept_fragment(
            "traffic_assumptions",
            str(get("traffic_assumptions_key")),
            lambda: _included(context, "inquiries/_traffic_assumptions.html"),
        )
    )
    parts.append(
        '\n        <dl class="figures">'
        f"\n          {figure_items(context['figures'])}"
        "\n        </dl>"
        f"\n        {tier_chart(context['chart'], context['chart_counts'])}"
        "\n        "
    )
    parts.append(
        _kept_fragment(
            "ttft_chart",
            str(get("ttft_points")),
            lambda: _included(context, "inquiries/_ttft_chart.html"),
        )
    )
    parts.append("\n        ")
    if get("traffic_later"):
        parts.append(
            '<div id="traffic-charts" class="traffic-later" '
            f'hx-post="{_shown(get("traffic_url"), context)}" hx-trigger="intersect once" '
            'hx-include="#configurator" hx-encoding="multipart/form-data" hx-target="this" '
            'hx-swap="outerHTML"></div>'
        )
    else:
        parts.append(_included(context, "inquiries/_traffic_charts.html"))
    parts.append("\n        ")
    if not private:
        parts.append(
            '<p class="share">'
            f'\n          <label for="share-url">{_("Link to this estimate")}</label>'
            '\n          <input id="share-url" type="url" readonly '
            f'value="{_shown(get("share_url_absolute"), context)}">'
            f'\n          <a href="{_shown(get("share_url"), context)}">{_("Open the link")}</a>'
            "\n        </p>"
        )
    parts.append("\n        ")
    active = get("active_users")
    if active is not None:
        text = _filled(
            _,
            "%(active)s of %(users)s users are active at once; the plan still keeps every "
            "user's conversation warm.",
            context,
            active=intcomma(active),
            users=intcomma(get("all_users")),
        )
        parts.append(f'\n          <p class="note">{text}</p>\n        ')
    parts.append("\n        ")
    gib = get("prompt_gib")
    if gib is not None:
        text = _filled(
            _,
            "The shared system prompt takes %(gib)s GiB once per engine instance with prefix "
            "caching; the figures count it in every conversation, so they err on the safe "
            "side.",
            context,
            gib=floatformat(gib, "2g"),
        )
        parts.append(f'\n          <p class="note">{text}</p>\n        ')
    return SafeString("".join(parts))
