from django.urls import path

from survey import import_views, research_views

app_name = "research"

urlpatterns = [
    path("", research_views.home, name="home"),
    path("studies/<slug:slug>/", research_views.study_detail, name="study"),
    path("studies/<slug:slug>/design/", research_views.study_design, name="study_design"),
    path("studies/<slug:slug>/participants/", research_views.study_participants, name="study_participants"),
    path("studies/<slug:slug>/approvals.csv", research_views.approvals_download, name="study_approvals"),
    path("studies/<slug:slug>/progress.json", research_views.study_progress_json, name="study_progress"),
    path("studies/<slug:slug>/ratings.<str:fmt>", research_views.ratings_download, name="ratings"),
    path("studies/<slug:slug>/judgments.<str:fmt>", research_views.judgments_download, name="judgments"),
    path("studies/<slug:slug>/judges/", research_views.study_judges, name="study_judges"),
    path("studies/<slug:slug>/judges.json", research_views.judge_runs_json, name="study_judges_json"),
    path("studies/<slug:slug>/judges-vs-people/", research_views.judges_vs_people, name="judges_vs_people"),
    path("studies/<slug:slug>/judges-vs-people.csv", research_views.judges_vs_people_csv,
         name="judges_vs_people_csv"),
    path("studies/<slug:slug>/judge-cases.jsonl", research_views.judge_cases_download, name="judge_cases"),
    path("imports/<int:pk>/", import_views.import_job_detail, name="import_job"),
    path("imports/<int:pk>.json", import_views.import_job_json, name="import_job_json"),
]
