"""The participant flow under load (`make loadtest`; 127.0.0.1 only): consent with a crowd id, skip the optional
page, read the instructions, start, answer the questionnaire, and rate another set, at a person's pace (a page
every 2-10 s). Every submit that the server acknowledged (302 to the done page) is written to ``SUBMITTED`` so
``check.py`` can confirm that each one is stored, once and whole."""
from __future__ import annotations

import os
import re
import uuid

from locust import FastHttpUser, between, task

SLUG = os.environ.get("LOAD_STUDY", "load")
SUBMITTED = os.environ.get("LOAD_SUBMITTED", "submitted.txt")
SETS_EACH = int(os.environ.get("LOAD_SETS_EACH", "3"))
# the pause after each page, "MIN,MAX" seconds: a person's pace by default; "0,0" for a burst that finds the
# saturation throughput
PAUSE = tuple(float(x) for x in os.environ.get("LOAD_PAUSE", "2,10").split(","))
FIELD = re.compile(r'type="radio" name="([^"]+)" value="1"')


class Participant(FastHttpUser):
    wait_time = between(*PAUSE)

    def on_start(self) -> None:
        self.crowd_id = uuid.uuid4().hex[:12]
        self.sets = 0
        # a person reads each page before the next click: every request is followed by a 2-10 s pause
        self.client.get(f"/s/{SLUG}/?PROLIFIC_PID={self.crowd_id}", name="1 consent page")
        self.wait()
        self._post(f"/s/{SLUG}/", {"consent": "on", "external_id": self.crowd_id, "external_source": "prolific"},
                   "2 consent")
        self.wait()
        self._post(f"/s/{SLUG}/about/", {"skip": "1"}, "3 skip about")
        self.wait()
        self.client.get(f"/s/{SLUG}/instructions/", name="4 instructions")

    def _post(self, url: str, data: dict[str, str], name: str, **kwargs):  # type: ignore[no-untyped-def]
        token = next((c.value for c in self.client.cookiejar if c.name == "csrftoken"), "")
        return self.client.post(url, data={**data, "csrfmiddlewaretoken": token}, name=name,
                                headers={"Referer": self.host + url}, **kwargs)

    @task
    def rate_a_set(self) -> None:
        if self.sets >= SETS_EACH:
            self.stop()
            return
        with self._post(f"/s/{SLUG}/start/", {}, "5 start", allow_redirects=False, catch_response=True) as start:
            location = start.headers.get("Location", "")
            if start.status_code != 302 or "/q/" not in location:
                start.success()  # "no more questionnaires for you" is an answer, not an error
                self.stop()
                return
        self.wait()
        page = self.client.get(location, name="6 questionnaire")
        fields = FIELD.findall(page.text)
        self.wait()
        answers = {field: str(1 + (index * 5 + self.sets) % 6) for index, field in enumerate(fields)}
        with self._post(location, answers, "7 submit", allow_redirects=False, catch_response=True) as submit:
            if submit.status_code == 302 and submit.headers.get("Location", "").endswith("/done/"):
                public_id = location.rstrip("/").split("/")[-1]
                with open(SUBMITTED, "a", encoding="utf-8") as out:
                    out.write(f"{public_id}\t{len(fields)}\n")
            else:
                submit.failure(f"submit answered {submit.status_code}")
        self.wait()
        self.client.get(location + "done/", name="8 done")
        self.sets += 1
