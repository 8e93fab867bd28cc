"""The estimate's section for a plan, rendered once per workload, model and language.

What the configurator shows for a plan up to its share link (the notices, the verdict,
the traffic assumptions, the figures with their calculations, the charts) depends only
on the plan, the Hub's notice and the language. :func:`plan_section` renders it from the
partial ``inquiries/configurator.html#plan_section`` and keeps the markup in Django's
``fragments`` cache (per process: a deployment never serves another version's markup),
keyed by the frozen :class:`~sizing.workload.Workload`, the model as sized (its id,
where its metadata comes from, a Hub revision included, its weight bytes, and the
config.json of a private model) and the language. A repeated estimate (a share link
opened again, a value typed and taken back, the page polling a Hub lookup) is served
from there.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.core.cache import caches
from django.template.loader import render_to_string
from django.utils.functional import SimpleLazyObject
from django.utils.safestring import SafeString
from django.utils.translation import get_language

from configurator.inquiries import chart, explain, notes, problems, traffic_chart, ttft_chart
from sizing.plan.orchestrator import Plan

SECTION_SECONDS = 3600
"""How long a rendered section is kept (an estimate's markup changes only with the code,
which a new process brings)."""


def _key(plan: Plan, *, notice: str, private_name: str | None, traffic_later: bool) -> str:
    """The cache key of the section: a digest of everything it is rendered from."""
    model = plan.request.model
    config = json.dumps(model.config, sort_keys=True) if private_name is not None else ""
    material = repr(
        (
            plan.request.workload,
            model.repo_id,
            model.source,
            model.weights_bytes,
            config,
            notice,
            private_name,
            traffic_later,
            get_language(),
        )
    )
    return "plan-section:" + hashlib.sha256(material.encode()).hexdigest()


def _context(
    plan: Plan, *, notice: str, private_name: str | None, traffic_later: bool
) -> dict[str, Any]:
    """What the partial ``plan_section`` prints, read off the plan. The traffic
    assumptions and the TTFT chart, which the number of users leaves alone, are kept
    rendered by the partial (``{% cache %}``) per language and their own data: each is
    made only when that cache has no entry for its key."""
    serving = plan.serving
    defaults = serving.assumption_notes if serving else ()
    curve = plan.transfer.curve()
    context_tokens = plan.request.workload.context_tokens
    tiers = chart.chart(plan)
    context: dict[str, Any] = {
        "language": get_language(),
        "notice": notice,
        "private": private_name is not None,
        "private_name": private_name or "",
        "assumptions": problems.assumption_texts(plan.request.model.architecture.assumptions),
        "offload_pays": plan.verdict.offload_pays,
        "reasons": notes.views(plan.verdict.reason_notes),
        "warnings": notes.views(plan.verdict.warning_notes),
        "traffic_assumptions": SimpleLazyObject(
            lambda: [notes.view(a.code, dict(a.values)) for a in defaults]
        ),
        "traffic_assumptions_key": repr([(a.code, a.values) for a in defaults]),
        "figures": explain.figures(plan),
        "chart": tiers,
        "chart_counts": chart.counts_text(tiers),
        "ttft": SimpleLazyObject(lambda: ttft_chart.chart(curve, context_tokens)),
        "ttft_key": ttft_chart.points_key(curve, context_tokens),
        "traffic_later": traffic_later and traffic_chart.available(plan),
    }
    if not traffic_later:
        context["traffic"] = traffic_chart.charts(traffic_chart.curves(plan))
    return context


def plan_section(
    plan: Plan, *, notice: str = "", private_name: str | None = None, traffic_later: bool = False
) -> SafeString:
    """The estimate's markup for ``plan`` in the active language, from the cache when it
    was rendered before.

    ``notice`` is the Hub's notice on the model (``""``: none); ``private_name`` the
    display name of a private model (``""`` when its config names none), ``None`` for a
    Hub model; ``traffic_later`` leaves out the two traffic charts (their curves
    re-evaluate the plan some 27 times) for a placeholder that loads them as their own
    fragment once they scroll into view.
    """
    fragments = caches["fragments"]
    key = _key(plan, notice=notice, private_name=private_name, traffic_later=traffic_later)
    html = fragments.get(key)
    if html is None:
        context = _context(
            plan, notice=notice, private_name=private_name, traffic_later=traffic_later
        )
        html = render_to_string("inquiries/configurator.html#plan_section", context)
        fragments.set(key, html, SECTION_SECONDS)
    return SafeString(html)
