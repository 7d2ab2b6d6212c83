from django.apps import AppConfig


class MetaevalConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "metaeval"
    verbose_name = "Meta-evaluation"

    def ready(self) -> None:
        from django.core import checks

        from metaeval.checks import plotly_vendored

        checks.register(plotly_vendored, checks.Tags.staticfiles)
