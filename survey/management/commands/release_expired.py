"""Release the slots of unfinished assignments whose time ran out (claims also do this on the fly)."""
from django.core.management.base import BaseCommand

from survey import services


class Command(BaseCommand):
    help = "Release expired, unfinished assignments so their questionnaire slots can be claimed again."

    def handle(self, *args, **options) -> None:
        released = services.assignments_release_expired()
        self.stdout.write(f"released {released} expired assignment(s)")
