"""Researcher pages for scoring runs, under /research/runs/."""
from django.urls import path

from metaeval import views

app_name = "runs"

urlpatterns = [
    path("", views.run_list, name="list"),
    path("judgments/", views.judgment_set_list, name="judgments"),
    path("<int:pk>/", views.run_detail, name="detail"),
    path("<int:pk>/status.json", views.run_status, name="status"),
    path("<int:pk>/scores.csv", views.run_scores_csv, name="scores"),
    path("<int:pk>/run.json", views.run_json, name="json"),
    path("<int:pk>/repeat/", views.run_repeat, name="repeat"),
    path("<int:pk>/cancel/", views.run_cancel, name="cancel"),
    path("<int:pk>/report/", views.run_report, name="report"),
    path("<int:pk>/report/tables.html", views.run_report_tables, name="report_tables"),
    path("<int:pk>/report.html", views.run_report_html, name="report_html"),
    path("<int:pk>/report.json", views.run_report_json, name="report_json"),
    path("<int:pk>/tables/<slug:name>.csv", views.run_report_table, name="report_table"),
    path("<int:pk>/tables/<slug:name>.json", views.run_report_table_json, name="report_table_json"),
]
