"""Top-level URL map: participant pages at /, researcher pages under /research/ (runs under /research/runs/),
the HTTP API under /api/, admin under /admin/, the health check at /healthz; error pages (403, 404, 500) in
config/errors.py."""
from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from config import errors
from survey.demo_passwords import AdminLoginForm, LoginForm

admin.site.login_form = AdminLoginForm  # says why a published demo password is refused (DEBUG off)

urlpatterns = [
    path("healthz", errors.healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("accounts/login/", auth_views.LoginView.as_view(authentication_form=LoginForm), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("research/runs/", include("metaeval.research_urls")),
    path("research/", include("survey.research_urls")),
    path("api/", include("api.urls")),
    path("", include("survey.urls")),
]

handler400 = errors.bad_request
handler403 = errors.permission_denied
handler404 = errors.not_found
handler500 = errors.server_error
