"""Load the demo: fixtures, a researcher and an admin account, the demo study and simulated ratings, and the
simulated pairwise judgments as judgment set ``demo``.

Idempotent: re-running re-imports the fixtures (a no-op when unchanged), keeps the accounts and does
not touch an existing demo study or its ratings.

The simulated ratings (``survey.demo``) are reproducible, times included: with the default participants and sets
they are the ratings of ``fixtures/demo/ratings.csv`` (``survey.demo.export_rows`` writes them as that file does;
``scripts/make_demo.py`` makes the file this way).
"""
from __future__ import annotations

import io
import json
import os
from datetime import UTC, datetime
from pathlib import Path

from django.apps import apps
from django.conf import settings
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction

from survey import demo, demo_passwords, judge_runs, services
from survey.demo_strengths import CRITERIA, preference_strength
from survey.models import Dataset, Reader, Study, System
from survey.research_views import RESEARCHER_GROUP

FIXTURES = Path(settings.BASE_DIR) / "fixtures" / "demo"
DEMO_DATASET = "demo"
DEMO_STUDY = "demo"
DEMO_JUDGMENTS = "demo"
DEMO_PREFERENCE_STUDY = "demo-ab"
#: the demo A/B study's systems (two personalised, a generic one, a baseline) and its simulated participants
PREFERENCE_SYSTEMS = ("PersonaPointer", "HistoryFusionT5", "GenericBARTx", "LeadLineBaseline")
PREFERENCE_PARTICIPANTS = 6
#: people per questionnaire of the demo A/B study: its 12 questionnaires x 10 = 120 answer sets, 18 taken by the
#: simulated participants, so visitors find open sets; and a set started but left holds its slot 10 minutes
PREFERENCE_RATERS = 10
PREFERENCE_HOLD_MINUTES = 10
DEMO_SEED = 2026
SIMULATED_PARTICIPANTS = 24
SETS_PER_SIMULATED_PARTICIPANT = 8
#: the simulated participants' clock starts here (fixed, so that the demo's ratings, times included, are the same
#: on every load and equal fixtures/demo/ratings.csv)
SIMULATION_START = datetime(2026, 11, 16, 9, 0, tzinfo=UTC)

INSTRUCTIONS = (
    "Each set shows six pairs of short headlines written about the same news article. For every pair, "
    "read both texts and rate how similar they are in what they say about the article: the facts, the "
    "angle and the emphasis. Ignore spelling, punctuation and word order.\n\n"
    "There are no right or wrong answers, and some pairs are nearly identical while others share little."
)


class Command(BaseCommand):
    help = "Load the demo dataset, accounts, study and simulated ratings (idempotent)."
    # a data load: `make demo` runs migrate, and with it the system checks, first; here they would only import every
    # URL module (the report pages pull in SciPy) and add seconds to a load that should take a few
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--participants", type=int, default=SIMULATED_PARTICIPANTS)
        parser.add_argument("--sets-each", type=int, default=SETS_PER_SIMULATED_PARTICIPANT)
        parser.add_argument(
            "--fixtures", type=Path, default=FIXTURES,
            help="folder with consolidated.jsonl, systems.json and readers.json (default: fixtures/demo; "
            "scripts/make_demo.py loads the files it has just made from elsewhere)",
        )

    def handle(self, *args, participants: int, sets_each: int, fixtures: Path, **options) -> None:
        out = io.StringIO()
        call_command("import_consolidated", str(fixtures / "consolidated.jsonl"), dataset=DEMO_DATASET, stdout=out)
        self.stdout.write(out.getvalue().strip())
        dataset = Dataset.objects.get(name=DEMO_DATASET)
        self._curate(dataset, fixtures)
        credentials = self._accounts()
        study, created = self._study(dataset)
        if created:
            result = demo.simulate_participants(
                study=study, participants=participants, sets_each=sets_each, seed=DEMO_SEED, start=SIMULATION_START
            )
            self.stdout.write(
                f"demo study: {study.questionnaires.count()} questionnaires; {result.participants} simulated "
                f"participants completed {result.completed_sets} rating sets"
            )
        else:
            self.stdout.write("demo study exists; left as it is")
        self._judgments(fixtures)
        self._preference_study(dataset, fixtures)
        for role, (username, password) in credentials.items():
            self.stdout.write(f"{role} account: {username} / {password}")

    @transaction.atomic
    def _curate(self, dataset: Dataset, fixtures: Path) -> None:
        for entry in json.loads((fixtures / "systems.json").read_text(encoding="utf-8")):
            System.objects.filter(name=entry["name"]).update(
                kind=entry["kind"], variant=entry.get("variant", ""), description=entry.get("description", "")
            )
        for entry in json.loads((fixtures / "readers.json").read_text(encoding="utf-8")):
            Reader.objects.filter(dataset=dataset, external_id=entry["reader_id"]).update(
                history=entry["history"], profile=entry.get("profile", "")
            )
        dataset.description = "Fictional news articles with reader-written and system headlines (demo)."
        dataset.save(update_fields=["description"])

    def _judgments(self, fixtures: Path) -> None:
        """The demo's simulated pairwise judgments as judgment set ``demo`` (kept when it exists)."""
        judgment_set = apps.get_model("metaeval", "JudgmentSet")
        path = fixtures / "judgments.csv"
        if judgment_set.objects.filter(name=DEMO_JUDGMENTS).exists() or not path.exists():
            return
        out = io.StringIO()
        call_command("import_judgments", DEMO_JUDGMENTS, str(path), description="Simulated A/B judgments of the "
                     "demo's systems by people and an LLM judge (scripts/make_demo.py)", stdout=out)
        self.stdout.write(f"pairwise judgment set {out.getvalue().strip()}")

    def _preference_study(self, dataset: Dataset, fixtures: Path) -> None:
        """A small preference (A/B) study of four demo systems, answered by simulated participants (kept when it
        exists)."""
        if Study.objects.filter(slug=DEMO_PREFERENCE_STUDY).exists():
            return
        designs = {entry["name"]: entry.get("design", {})
                   for entry in json.loads((fixtures / "systems.json").read_text(encoding="utf-8"))}
        names = [name for name in PREFERENCE_SYSTEMS if name in designs]
        if len(names) < 2:
            return
        study = Study.objects.create(
            slug=DEMO_PREFERENCE_STUDY, title="Which headline is better? (demo A/B study)", dataset=dataset,
            kind=Study.Kind.PREFERENCE, raters_per_questionnaire=PREFERENCE_RATERS, cases_per_pair=6,
            pairs_per_questionnaire=3, assignment_timeout_minutes=PREFERENCE_HOLD_MINUTES, seed=DEMO_SEED,
            show_article=True,
            disclaimer="A demonstration study: your answers are stored on this machine only.",
        )
        study.systems.set(System.objects.filter(name__in=names))
        services.questionnaires_generate(study=study)
        services.study_open(study=study)
        strengths = {name: {criterion: preference_strength(float(designs[name].get("personalization", 0.0)),
                                                           float(designs[name].get("errors", 0.0)), criterion)
                            for criterion in CRITERIA} for name in names}
        result = demo.simulate_preference(study=study, participants=PREFERENCE_PARTICIPANTS, sets_each=3,
                                          seed=DEMO_SEED, start=SIMULATION_START, strengths=strengths)
        judged = judge_runs.judge_run_import(
            study=study, data=demo.simulated_judge_file(study=study, strengths=strengths, seed=DEMO_SEED),
            file_name="demo-llm-judge.csv")
        self.stdout.write(f"demo preference study {study.slug}: {study.questionnaires.count()} questionnaires; "
                          f"{result.participants} simulated participants completed {result.completed_sets} sets; "
                          f"a simulated LLM judge (file judge) gave {sum(run.total for run in judged)} judgments")

    def _accounts(self) -> dict[str, tuple[str, str]]:
        """The demo's researcher and admin. The published default passwords only with DEBUG on: otherwise the
        accounts need DEMO_RESEARCHER_PASSWORD and DEMO_ADMIN_PASSWORD (not the published ones), without them none
        is created, and an existing demo account that still has a published password is locked
        (``survey.demo_passwords``)."""
        researcher_pw = os.environ.get("DEMO_RESEARCHER_PASSWORD", "")
        admin_pw = os.environ.get("DEMO_ADMIN_PASSWORD", "")
        locked: set[str] = set()
        if not settings.DEBUG:
            locked = self._lock_published()
            published = [name for name, value in (("DEMO_RESEARCHER_PASSWORD", researcher_pw),
                                                  ("DEMO_ADMIN_PASSWORD", admin_pw)) if demo_passwords.refused(value)]
            if published:
                self.stdout.write(
                    f"no demo accounts: {' and '.join(published)} "
                    f"{'is a published demo password' if len(published) == 1 else 'are published demo passwords'}, "
                    "refused while DEBUG is off; choose passwords of your own"
                )
                return {}
            if not (researcher_pw and admin_pw):
                self.stdout.write(
                    "no demo accounts: DEBUG is off, where the published demo passwords are refused; set "
                    "DEMO_RESEARCHER_PASSWORD and DEMO_ADMIN_PASSWORD, or create accounts with "
                    "`manage.py createsuperuser` (and add researchers to the group named researcher in the admin)"
                )
                return {}
        researcher_pw = researcher_pw or demo_passwords.PUBLISHED["researcher"]
        admin_pw = admin_pw or demo_passwords.PUBLISHED["admin"]
        group, _ = Group.objects.get_or_create(name=RESEARCHER_GROUP)
        researcher, researcher_new = User.objects.get_or_create(username="researcher")
        if researcher_new or "researcher" in locked:
            researcher.set_password(researcher_pw)
            researcher.save()
        researcher.groups.add(group)
        admin, admin_new = User.objects.get_or_create(
            username="admin", defaults={"is_staff": True, "is_superuser": True, "email": "admin@localhost"}
        )
        if admin_new or "admin" in locked:
            admin.set_password(admin_pw)
            admin.save()
        # a password hash costs a noticeable fraction of a second: a new account's password is known
        shown = {
            "researcher": ("researcher", researcher_pw if researcher_new or "researcher" in locked
                           or researcher.check_password(researcher_pw) else "(changed)"),
            "admin": ("admin", admin_pw if admin_new or "admin" in locked or admin.check_password(admin_pw)
                      else "(changed)"),
        }
        return shown

    def _lock_published(self) -> set[str]:
        """DEBUG off: a demo account (made with DEBUG on, as `make demo` does) whose password is still a published
        one can no longer log in; the message says how to give it a new one. Returns the demo accounts without a
        usable password (locked now or by an earlier run), which DEMO_*_PASSWORD then sets."""
        locked = set()
        for user in User.objects.filter(username__in=list(demo_passwords.PUBLISHED)).order_by("username"):
            if not user.has_usable_password():
                locked.add(user.username)
            elif demo_passwords.lock_published(user):
                locked.add(user.username)
                variable = f"DEMO_{user.username.upper()}_PASSWORD"
                self.stdout.write(
                    f"demo account {user.username}: its password was a published demo password, refused while DEBUG "
                    f"is off; the account can no longer log in. Give it a new password with `manage.py "
                    f"changepassword {user.username}`, or run load_demo again with DEMO_RESEARCHER_PASSWORD and "
                    f"DEMO_ADMIN_PASSWORD set (then {variable} is its password)."
                )
        return locked

    def _study(self, dataset: Dataset) -> tuple[Study, bool]:
        existing = Study.objects.filter(slug=DEMO_STUDY).first()
        if existing is not None:
            return existing, False
        with transaction.atomic():
            study = Study.objects.create(
                slug=DEMO_STUDY,
                title="How similar are these headlines?",
                dataset=dataset,
                instructions=INSTRUCTIONS,
                systems_per_questionnaire=5,
                raters_per_questionnaire=2,
                assignment_timeout_minutes=45,
                seed=DEMO_SEED,
            )
            study.systems.set(System.objects.filter(summaries__document__dataset=dataset).exclude(name="user").distinct())
            services.questionnaires_generate(study=study)
            services.study_open(study=study)
        return study, True
