"""Participant pages. Thin: parse the request, call one service or selector, render.

Identity is an opaque participant token kept in the session, one per study. Nothing rendered here
contains a system name, a summary/item id or a reference-pair flag (see ``selectors.assignment_pairs``).
Every page after the landing page is ``never_cache`` (``Cache-Control: no-store``): the browser's Back button
asks the server again instead of showing a stale form.
"""
from __future__ import annotations

from urllib.parse import quote

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from survey import selectors, services
from survey.forms import ConsentForm, DemographicsForm
from survey.models import Assignment, Participant, Study

ALREADY_SUBMITTED = "You already submitted this set; nothing was changed. Your ratings and code are as before."

# URL parameters under which crowd platforms pass their worker id (Prolific, MTurk, generic).
CROWD_ID_PARAMS = {"PROLIFIC_PID": "prolific", "workerId": "mturk", "participant_id": "crowd", "pid": "crowd"}


def _session_key(study: Study) -> str:
    return f"survey-participant-{study.pk}"


def _participant(request: HttpRequest, study: Study) -> Participant | None:
    token = request.session.get(_session_key(study))
    if not token:
        return None
    participant = Participant.objects.filter(study=study, token=token).order_by().first()
    if participant is not None:
        participant.study = study  # already loaded: no second query for it
    return participant


def _study_or_404(slug: str) -> Study:
    return get_object_or_404(Study, slug=slug)


def index(request: HttpRequest) -> HttpResponse:
    studies = Study.objects.filter(status=Study.Status.OPEN).order_by("title")
    return render(request, "survey/index.html", {"studies": studies})


@never_cache
@require_http_methods(["GET", "HEAD", "POST"])
def landing(request: HttpRequest, slug: str) -> HttpResponse:
    study = _study_or_404(slug)
    participant = _participant(request, study)
    if participant is not None and request.method == "GET":
        return redirect("survey:instructions", slug=study.slug)
    if request.method == "POST":
        form = ConsentForm(request.POST)
        if form.is_valid() and study.status == Study.Status.OPEN:
            participant = services.participant_register(
                study=study,
                external_id=form.cleaned_data["external_id"],
                external_source=form.cleaned_data["external_source"],
            )
            request.session[_session_key(study)] = participant.token
            request.session.cycle_key()
            return redirect("survey:about", slug=study.slug)
    else:
        initial = {}
        for param, source in CROWD_ID_PARAMS.items():
            if request.GET.get(param):
                initial = {"external_id": request.GET[param], "external_source": source}
                break
        form = ConsentForm(initial=initial)
        if initial:  # an id the form would refuse is reported now, not silently cut to fit
            form.errors.update(ConsentForm({**initial, "consent": "on"}).errors)
    return render(request, "survey/landing.html", {"study": study, "form": form, "step": 1},
                  status=400 if request.method == "POST" and form.errors else 200)


@never_cache
@require_http_methods(["GET", "HEAD", "POST"])
def about(request: HttpRequest, slug: str) -> HttpResponse:
    study = _study_or_404(slug)
    participant = _participant(request, study)
    if participant is None:
        return redirect("survey:landing", slug=study.slug)
    if request.method == "POST":
        form = DemographicsForm(request.POST)
        if "skip" in request.POST:
            return redirect("survey:instructions", slug=study.slug)
        if form.is_valid():
            services.participant_update_demographics(participant=participant, **form.cleaned_data)
            return redirect("survey:instructions", slug=study.slug)
    else:
        form = DemographicsForm(
            initial={"name": participant.name, "gender": participant.gender, "occupation": participant.occupation}
        )
    return render(request, "survey/about.html", {"study": study, "form": form, "step": 2},
                  status=400 if request.method == "POST" and form.errors else 200)


@never_cache
def instructions(request: HttpRequest, slug: str) -> HttpResponse:
    study = _study_or_404(slug)
    if _participant(request, study) is None:
        return redirect("survey:landing", slug=study.slug)
    return render(
        request, "survey/instructions.html", {"study": study, "labels": selectors.scale_choices(study), "step": 3}
    )


@never_cache
@require_POST
def start(request: HttpRequest, slug: str) -> HttpResponse:
    """Claim a questionnaire (the participant's live one, or a new one) and go to it."""
    study = _study_or_404(slug)
    participant = _participant(request, study)
    if participant is None:
        return redirect("survey:landing", slug=study.slug)
    try:
        assignment = services.assignment_claim(participant=participant)
    except services.NoQuestionnaireAvailable as exc:
        return render(request, "survey/none_left.html", {"study": study, "message": str(exc)})
    return redirect("survey:questionnaire", public_id=assignment.public_id)


def _own_assignment(request: HttpRequest, public_id: str) -> tuple[Assignment, Participant]:
    assignment = (
        Assignment.objects.select_related("questionnaire__study", "participant")
        .filter(public_id=public_id)
        .order_by()  # one row: the model's ordering would only add joins to compile
        .first()
    )
    if assignment is None:
        raise Http404("No such questionnaire.")
    participant = _participant(request, assignment.questionnaire.study)
    if participant is None or participant.pk != assignment.participant_id:
        raise Http404("No such questionnaire.")
    return assignment, participant


@never_cache
@require_http_methods(["GET", "HEAD", "POST"])
def questionnaire(request: HttpRequest, public_id: str) -> HttpResponse:
    assignment, participant = _own_assignment(request, public_id)
    study = assignment.questionnaire.study
    if assignment.completed_at is not None:
        if request.method == "POST":  # a form resubmitted (Back, reload): say so rather than thank again
            messages.warning(request, ALREADY_SUBMITTED)
        return redirect("survey:done", public_id=public_id)
    errors: dict[str, str] = {}
    submitted: dict[str, str] = {}
    if request.method == "POST":
        # a field sent twice (k=7&k=2) reaches the service as a list, which it refuses (no "last one wins")
        posted = {k: v[0] if len(v) == 1 else v for k, v in request.POST.lists() if k != "csrfmiddlewaretoken"}
        submitted = {k: v for k, v in posted.items() if isinstance(v, str)}
        asked_at = timezone.now()
        submit = services.judgments_submit if study.is_pairwise else services.ratings_submit
        try:
            saved = submit(assignment_public_id=public_id, participant=participant, values=posted)
        except services.SubmissionInvalid as exc:
            errors = exc.field_errors
            messages.error(request, str(exc))
        except services.AssignmentExpired as exc:
            return render(
                request,
                "survey/none_left.html",
                {"study": study, "message": str(exc), "offer_next": True, "expired_at": assignment.expires_at},
            )
        else:
            if saved.completed_at is not None and saved.completed_at < asked_at:  # a concurrent submit won
                messages.warning(request, ALREADY_SUBMITTED)
            return redirect("survey:done", public_id=public_id)
    done_before = participant.assignments.filter(completed_at__isnull=False).count()
    if study.is_pairwise:
        return _preference_page(request, study, assignment, errors, submitted, done_before + 1)
    labels = selectors.scale_choices(study)
    pairs = [
        {"pair": p, "error": errors.get(p.key, ""), "value": submitted.get(p.key, "")}
        for p in selectors.assignment_pairs(assignment)
    ]
    return render(
        request,
        "survey/questionnaire.html",
        {
            "study": study,
            "assignment": assignment,
            "pairs": pairs,
            "labels": labels,
            "total": len(pairs),
            "sequence_number": done_before + 1,
            "expires_at": assignment.expires_at,
            "article": assignment.questionnaire.document if study.show_article else None,
            "step": 4,
        },
        status=400 if errors else 200,
    )


def _preference_page(request: HttpRequest, study: Study, assignment: Assignment, errors: dict[str, str],
                     submitted: dict[str, str], sequence_number: int) -> HttpResponse:
    """A preference questionnaire: the context pane, then per pair the two texts and one A/B question per
    criterion (field ``<pair key>-<criterion>``); blind: no system name or id on the page."""
    pairs = []
    for shown in selectors.assignment_choices(assignment):
        questions = [
            {"field": (field := services.choice_field(shown.key, c["name"])), "text": c["question"],
             "error": errors.get(field, ""), "value": submitted.get(field, "")}
            for c in study.criteria
        ]
        pairs.append({"pair": shown, "questions": questions, "errors": any(q["error"] for q in questions)})
    return render(
        request,
        "survey/preference.html",
        {
            "study": study, "assignment": assignment, "pairs": pairs, "total": len(pairs),
            "criteria": study.criteria, "questions": len(pairs) * len(study.criteria),
            "sequence_number": sequence_number, "expires_at": assignment.expires_at,
            "context": selectors.preference_context(assignment), "step": 4,
            "sentences": study.kind == Study.Kind.SENTENCE_PREFERENCE,
            "label": "Sentence" if study.kind == Study.Kind.SENTENCE_PREFERENCE else "Text",
        },
        status=400 if errors else 200,
    )


@never_cache
def done(request: HttpRequest, public_id: str) -> HttpResponse:
    assignment, participant = _own_assignment(request, public_id)
    if assignment.completed_at is None:
        return redirect("survey:questionnaire", public_id=public_id)
    study = assignment.questionnaire.study
    completed = participant.assignments.filter(completed_at__isnull=False).count()
    return render(
        request,
        "survey/done.html",
        {"study": study, "assignment": assignment, "completed": completed, "step": 5},
    )


@never_cache
def finish(request: HttpRequest, public_id: str) -> HttpResponse:
    """Send a crowd participant back to the platform's completion URL with their completion code."""
    assignment, participant = _own_assignment(request, public_id)
    study = assignment.questionnaire.study
    if assignment.completed_at is None or not study.completion_url:
        return redirect("survey:done", public_id=public_id)
    url = study.completion_url.replace("{code}", quote(assignment.completion_code)).replace(
        "{pid}", quote(participant.external_id)
    )
    return redirect(url)
