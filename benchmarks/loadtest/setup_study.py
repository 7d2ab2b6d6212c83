"""Create the load study on the demo dataset (`make loadtest`): every demo questionnaire design with 12 raters
each (LOAD_RATERS), open, so 300 participants find work. Run with the project's Python after `load_demo`."""
from __future__ import annotations

import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup()

from survey import services  # noqa: E402
from survey.models import Dataset, Study  # noqa: E402

slug = os.environ.get("LOAD_STUDY", "load")
raters = int(os.environ.get("LOAD_RATERS", "12"))
Study.objects.filter(slug=slug).delete()
demo = Study.objects.get(slug="demo")
study = Study.objects.create(
    slug=slug, title="Load test", dataset=Dataset.objects.get(name="demo"), raters_per_questionnaire=raters,
    systems_per_questionnaire=demo.systems_per_questionnaire, seed=7, instructions=demo.instructions,
)
study.systems.set(demo.systems.all())
report = services.questionnaires_generate(study=study)
services.study_open(study=study)
print(f"load study: {study.questionnaires.count()} questionnaires x {raters} raters")
