from django.urls import path

from survey import views

app_name = "survey"

urlpatterns = [
    path("", views.index, name="index"),
    path("s/<slug:slug>/", views.landing, name="landing"),
    path("s/<slug:slug>/about/", views.about, name="about"),
    path("s/<slug:slug>/instructions/", views.instructions, name="instructions"),
    path("s/<slug:slug>/start/", views.start, name="start"),
    path("q/<str:public_id>/", views.questionnaire, name="questionnaire"),
    path("q/<str:public_id>/done/", views.done, name="done"),
    path("q/<str:public_id>/finish/", views.finish, name="finish"),
]
