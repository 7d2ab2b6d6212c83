"""Shared fixtures: a small synthetic dataset and an open study built through the services; a PostgreSQL
distance cache in a schema of its own."""
from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest

from survey import services
from survey.models import Dataset, Document, Reader, Study, Summary, System

SYSTEM_NAMES = [f"Sysname{c}" for c in "ABCDEFGHIJ"]  # distinctive: never occur in ordinary text


@pytest.fixture(autouse=True)
def _fresh_cache():
    """Rate-limit counters live in the cache: each test starts with none."""
    from django.core.cache import cache

    cache.clear()
    yield


def _database_use(item: pytest.Item) -> int:
    """pytest-django's order of a test: 0 in a rolled-back transaction, 1 transactional (``live_server`` too),
    2 without the database."""
    marker = item.get_closest_marker("django_db")
    fixtures = getattr(item, "fixturenames", ())
    if (marker is not None and (marker.kwargs.get("transaction") or marker.kwargs.get("reset_sequences"))) or \
            "transactional_db" in fixtures or "live_server" in fixtures:
        return 1
    return 0 if marker is not None or "db" in fixtures else 2


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under xdist (`make test`: ``--dist loadfile --no-loadscope-reorder``) the workers are handed whole files in
    this order: the files marked ``heavy`` first, so that no worker starts a minute-long file while the other has
    almost finished; then, as pytest-django orders tests, the files with rolled-back tests, the transactional ones
    (a ``live_server`` file after every rolled-back one: after it, PostgreSQL could not drop the test database), and
    those without the database (small ones fill the end), each group most tests first. A file's tests keep their
    order; without xdist nothing moves."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    modules: dict[str, list[pytest.Item]] = {}
    for item in items:
        modules.setdefault(item.nodeid.split("::", 1)[0], []).append(item)

    def rank(tests: list[pytest.Item]) -> tuple[int, int, int]:
        live = any("live_server" in getattr(test, "fixturenames", ()) for test in tests)
        heavy = not live and any(test.get_closest_marker("heavy") for test in tests)
        group = 1 if live else min(_database_use(test) for test in tests)
        return (0 if heavy else 1), group, -len(tests)

    items[:] = [item for tests in sorted(modules.values(), key=rank) for item in tests]


#: the server a PostgreSQL distance cache test uses (the machine's own; .ci/run starts it)
PG_CACHE_URL = os.environ.get("METAEVAL_TEST_CACHE_URL", "postgresql://postgres@127.0.0.1:5432/postgres")


@pytest.fixture
def pg_cache_url() -> Iterator[str]:
    """A ``METAEVAL_CACHE_URL`` whose connections work in a fresh schema (libpq ``options=-c search_path=...``),
    dropped afterwards."""
    import psycopg

    schema = f"cache_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(PG_CACHE_URL, autocommit=True) as admin:
        admin.execute(f'CREATE SCHEMA "{schema}"')
        try:
            yield f"{PG_CACHE_URL}?options=-csearch_path%3D{schema}"
        finally:
            admin.execute(f'DROP SCHEMA "{schema}" CASCADE')


def build_dataset(*, name: str = "tiny", docs: int = 3, readers: int = 3, systems=SYSTEM_NAMES) -> Dataset:
    dataset = Dataset.objects.create(name=name)
    user = System.objects.get_or_create(name="user", defaults={"kind": System.Kind.REFERENCE})[0]
    sys_objs = [System.objects.get_or_create(name=s, defaults={"kind": System.Kind.PERSONALIZED})[0] for s in systems]
    reader_objs = [
        Reader.objects.create(dataset=dataset, external_id=f"R{r}", history=[f"H{r}{i}" for i in range(3)])
        for r in range(readers)
    ]
    for d in range(docs):
        doc = Document.objects.create(
            dataset=dataset, external_id=f"N{d}", headline=f"Headline {d}", body=f"Body of article {d}. " * 20
        )
        for r in reader_objs:
            Summary.objects.create(
                document=doc, reader=r, system=user, text=f"gold headline {d} written by reader {r.external_id}"
            )
            for s in sys_objs:
                Summary.objects.create(
                    document=doc, reader=r, system=s, text=f"output {d} for reader {r.external_id} variant {s.pk}"
                )
    return dataset


def make_generic(dataset: Dataset, systems=("SysnameA", "SysnameB")) -> Dataset:
    """Make ``systems`` non-personalised in ``dataset``: one text for every reader of a document (for reader R1 with
    extra spaces and a line break, which a browser shows the same)."""
    for summary in Summary.objects.filter(document__dataset=dataset, system__name__in=systems).select_related(
        "document", "reader", "system"
    ):
        text = f"one headline for all about {summary.document.external_id} by {summary.system.name}"
        if summary.reader.external_id == "R1":
            text = "  " + text.replace(" about ", "  about\n") + " "
        summary.text = text
        summary.save()
    return dataset


def build_study(dataset: Dataset, *, slug: str = "study", raters: int = 2, per_q: int = 5, **fields) -> Study:
    study = Study.objects.create(
        slug=slug,
        title=f"Study {slug}",
        dataset=dataset,
        raters_per_questionnaire=raters,
        systems_per_questionnaire=per_q,
        seed=fields.pop("seed", 11),
        **fields,
    )
    study.systems.set(System.objects.exclude(name="user"))
    services.questionnaires_generate(study=study)
    services.study_open(study=study)
    return study


@pytest.fixture
def dataset(db) -> Dataset:
    return build_dataset()


@pytest.fixture
def study(dataset) -> Study:
    return build_study(dataset)


def full_answers(assignment, value: int = 4) -> dict[str, str]:
    return {entry["key"]: str(value) for entry in assignment.presentation}


def complete_questionnaires(study, answers, participants: int = 1) -> list:
    """``participants`` new participants each complete every questionnaire they can claim;
    ``answers(assignment, index)`` gives the values (index: the participant's 0-based number). Returns them."""
    from survey import services as survey_services

    done = []
    for index in range(participants):
        participant = survey_services.participant_register(study=study)
        done.append(participant)
        while True:
            try:
                assignment = survey_services.assignment_claim(participant=participant)
            except survey_services.NoQuestionnaireAvailable:
                break
            survey_services.ratings_submit(
                assignment_public_id=assignment.public_id,
                participant=participant,
                values=answers(assignment, index),
            )
    return done
