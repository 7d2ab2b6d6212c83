"""Who may use the API: researchers (active, and staff or in the "researcher" group), as on /research/."""
from __future__ import annotations

from rest_framework.permissions import BasePermission

from survey.research_views import is_researcher


class IsResearcher(BasePermission):
    """Authenticated and a researcher (``survey.research_views.is_researcher``; staff count as researchers).

    No per-object rules: a researcher sees every dataset, study and run, as the /research/ pages do.
    Anonymous requests get 401 (with ``WWW-Authenticate: Token``), other users 403.
    """

    message = "Researcher access required."

    def has_permission(self, request, view) -> bool:
        user = request.user
        return bool(user and user.is_authenticated and is_researcher(user))
