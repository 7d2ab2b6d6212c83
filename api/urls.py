"""The HTTP API under /api/ (researchers only; see docs/reference/http-api.md and the schema at /api/schema/)."""
from django.urls import path

from api import views

app_name = "api"

urlpatterns = [
    path("token/", views.ObtainResearcherToken.as_view(), name="token"),
    path("datasets/", views.DatasetList.as_view(), name="dataset-list"),
    path("datasets/<str:name>/", views.DatasetDetail.as_view(), name="dataset-detail"),
    path("datasets/<str:name>/systems/", views.DatasetSystems.as_view(), name="dataset-systems"),
    path("studies/", views.StudyList.as_view(), name="study-list"),
    path("studies/<str:slug>/", views.StudyDetail.as_view(), name="study-detail"),
    path("studies/<str:slug>/progress/", views.StudyProgressView.as_view(), name="study-progress"),
    path("studies/<str:slug>/ratings/", views.StudyRatings.as_view(), name="study-ratings"),
    path("studies/<str:slug>/judgments/", views.StudyJudgments.as_view(), name="study-judgments"),
    path("studies/<str:slug>/judge-runs/", views.StudyJudgeRuns.as_view(), name="study-judge-runs"),
    path("studies/<str:slug>/judge-runs/<int:pk>/", views.StudyJudgeRunDetail.as_view(), name="study-judge-run"),
    path("studies/<str:slug>/judge-runs/<int:pk>/cancel/", views.StudyJudgeRunAction.as_view(action="cancel"),
         name="study-judge-run-cancel"),
    path("studies/<str:slug>/judge-runs/<int:pk>/resume/", views.StudyJudgeRunAction.as_view(action="resume"),
         name="study-judge-run-resume"),
    path("studies/<str:slug>/judges-vs-people/", views.StudyJudgesVsPeople.as_view(),
         name="study-judges-vs-people"),
    path("judge-endpoints/", views.JudgeEndpointList.as_view(), name="judge-endpoint-list"),
    path("judgment-sets/", views.JudgmentSetList.as_view(), name="judgment-set-list"),
    path("runs/", views.RunList.as_view(), name="run-list"),
    path("runs/<int:pk>/", views.RunDetail.as_view(), name="run-detail"),
    path("runs/<int:pk>/cancel/", views.RunCancel.as_view(), name="run-cancel"),
    path("runs/<int:pk>/retry/", views.RunRetry.as_view(), name="run-retry"),
    path("runs/<int:pk>/results/", views.RunResults.as_view(), name="run-results"),
    path("runs/<int:pk>/report/", views.RunReport.as_view(), name="run-report"),
    # OpenAPI 3: JSON by default, YAML with ?format=yaml or Accept: application/yaml (no Swagger UI: it needs
    # JavaScript from a CDN or the drf-spectacular-sidecar package, which is not installed)
    path("schema/", views.SchemaView.as_view(), name="schema"),
]
