"""Top-level URL map: participant pages at /, researcher pages under /research/ (runs under /research/runs/),
the HTTP API under /api/, admin under /admin/."""
from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("research/runs/", include("metaeval.research_urls")),
    path("research/", include("survey.research_urls")),
    path("api/", include("api.urls")),
    path("", include("survey.urls")),
]
