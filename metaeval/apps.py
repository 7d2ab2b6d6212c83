from django.apps import AppConfig


class MetaevalConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "metaeval"
    verbose_name = "Meta-evaluation"
