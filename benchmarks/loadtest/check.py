"""After a load run (`make loadtest`): the invariants, checked in the database.

* no questionnaire holds more live or completed assignments than its capacity;
* no participant holds two live assignments;
* every completed assignment has exactly one rating per item (no partial, no duplicated submit), and no rating
  belongs to an unfinished assignment;
* every submit the server acknowledged (``LOAD_SUBMITTED``, written by the locustfile) is stored, with as many
  ratings as the page had pairs.
Prints one line per invariant and exits 1 if any fails."""
from __future__ import annotations

import os
import sys

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup()

from django.db.models import Count, Q  # noqa: E402

from survey.models import Assignment, Questionnaire, Rating, Study  # noqa: E402

study = Study.objects.get(slug=os.environ.get("LOAD_STUDY", "load"))
capacity = study.raters_per_questionnaire
checks: list[tuple[str, bool, str]] = []

held = (Questionnaire.objects.filter(study=study)
        .annotate(held=Count("assignments", filter=Q(assignments__released_at__isnull=True))))
over = [q.position for q in held if q.held > capacity]
checks.append(("no over-assigned questionnaire", not over, f"{len(over)} over capacity {capacity}"))

live = (Assignment.objects.filter(questionnaire__study=study, completed_at__isnull=True, released_at__isnull=True)
        .values("participant").annotate(n=Count("id")).filter(n__gt=1))
checks.append(("one live assignment per participant", not live.exists(), f"{live.count()} participants with more"))

completed = (Assignment.objects.filter(questionnaire__study=study, completed_at__isnull=False)
             .annotate(ratings_n=Count("ratings", distinct=True), items_n=Count("questionnaire__items", distinct=True)))
partial = [a.public_id for a in completed if a.ratings_n != a.items_n]
checks.append(("every completed set whole (one rating per pair)", not partial, f"{len(partial)} partial or doubled"))
stray = Rating.objects.filter(assignment__questionnaire__study=study, assignment__completed_at__isnull=True).count()
checks.append(("no rating on an unfinished assignment", stray == 0, f"{stray} stray ratings"))

acknowledged: dict[str, int] = {}
path = os.environ.get("LOAD_SUBMITTED", "submitted.txt")
if os.path.exists(path):
    for line in open(path, encoding="utf-8"):
        public_id, pairs = line.split()
        acknowledged[public_id] = int(pairs)
stored = {a.public_id: a.ratings_n for a in completed}
missing = [p for p, pairs in acknowledged.items() if stored.get(p) != pairs]
checks.append(("every acknowledged submit stored", not missing and bool(acknowledged),
               f"{len(acknowledged)} acknowledged, {len(missing)} missing or different"))

print(f"sets completed: {len(stored)}; participants: {study.participants.count()}")
for name, ok, detail in checks:
    print(f"{'ok  ' if ok else 'FAIL'} {name} ({detail})")
sys.exit(0 if all(ok for _, ok, _ in checks) else 1)
