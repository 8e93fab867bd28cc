"""Client half of the end-to-end verification benchmark (run by bench_verification_worker).

Runs in its own process with ``DATABASE_URL`` and ``CELERY_BROKER_URL`` set by the
benchmark: creates the seed quote, starts its verification a few times and waits for a
real worker to finish each report. Prints the seconds of each run as JSON.
"""

from __future__ import annotations

import json
import os
import sys
import time

from sizing.summary import plan_summary


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "configurator.settings")
    import django

    django.setup()
    from benchmarks.seed import SEED_INPUTS
    from configurator.planning.services import plan_stored
    from configurator.quotes.models import Quote, QuoteAlternative
    from configurator.verification.models import DONE_STATUSES, VerificationReport
    from configurator.verification.services import benchmarks_load_initial
    from configurator.verification.tasks import verification_start

    benchmarks_load_initial()
    inputs = SEED_INPUTS
    quote = Quote.objects.create(customer_name="Benchmark")
    QuoteAlternative.objects.create(
        quote=quote, label="A", inputs=inputs, plan_summary=plan_summary(plan_stored(inputs))
    )
    runs = []
    for _ in range(int(sys.argv[1]) if len(sys.argv) > 1 else 5):
        start = time.perf_counter()
        verification_start(quote=quote)
        while True:
            status = VerificationReport.objects.get(quote=quote).status
            if status in DONE_STATUSES:
                break
            if time.perf_counter() - start > 60:
                print(json.dumps({"error": "no report within 60 s"}))
                return 1
            time.sleep(0.02)
        runs.append(time.perf_counter() - start)
    print(json.dumps({"runs_s": runs, "status": status}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
