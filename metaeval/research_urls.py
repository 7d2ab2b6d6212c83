"""Researcher pages for scoring runs, under /research/runs/."""
from django.urls import path  # noqa: F401

app_name = "runs"

urlpatterns: list = []
