"""The production configuration as `make serve` runs it: DEBUG off, collectstatic, gunicorn; pages styled (our
CSS and the admin's served by whitenoise with hashed names and compression), the participant flow working with
CSRF over plain HTTP on 127.0.0.1 (SECURE_COOKIES=0), and HEAD, /healthz answering."""
from __future__ import annotations

import gzip
import hashlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from django.conf import settings

from metaeval.assets import PLOTLY_JS, PLOTLY_SHA256

pytestmark = [pytest.mark.e2e, pytest.mark.heavy]
ROOT = Path(settings.BASE_DIR)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def served(tmp_path):
    env = {
        **os.environ, "DEBUG": "0", "SECRET_KEY": "production-test-" + "k" * 40, "SECURE_COOKIES": "0",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}", "STATIC_ROOT": str(tmp_path / "static"),
        "ALLOWED_HOSTS": "127.0.0.1", "LOG_LEVEL": "WARNING", "METAEVAL_CACHE_DIR": str(tmp_path / "cache"),
    }
    env.pop("DJANGO_SETTINGS_MODULE", None)
    manage = [sys.executable, str(ROOT / "manage.py")]
    for command in (["migrate", "--noinput", "-v0"], ["collectstatic", "--noinput", "-v0"],
                    ["load_demo", "--participants", "2", "--sets-each", "1"]):
        subprocess.run(manage + command, env=env, cwd=ROOT, check=True, capture_output=True, timeout=300)
    port = _free_port()
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "gunicorn"), "config.wsgi", "--bind", f"127.0.0.1:{port}",
         "--workers", "2"], env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(150):
            try:
                urllib.request.urlopen(url + "/healthz", timeout=2)
                break
            except OSError:
                if server.poll() is not None:
                    pytest.fail("gunicorn exited: " + server.stderr.read().decode()[-2000:])
                time.sleep(0.2)
        yield url, tmp_path
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_debug_off_under_gunicorn_pages_are_styled_and_the_flow_works(served, browser):
    url, tmp_path = served
    head = urllib.request.urlopen(urllib.request.Request(url + "/s/demo/", method="HEAD"), timeout=10)
    assert head.status == 200
    page = browser.new_page(viewport={"width": 1000, "height": 800})
    css: list[tuple[str, int, str]] = []
    page.on("response", lambda r: css.append((r.url, r.status, r.headers.get("content-encoding", "")))
            if r.url.endswith(".css") else None)
    page.goto(url + "/s/demo/?PROLIFIC_PID=prod-worker")
    ours = [entry for entry in css if "/static/survey/site." in entry[0]]
    assert ours and ours[0][1] == 200 and ours[0][0] != url + "/static/survey/site.css"  # the hashed name
    assert ours[0][2] == "gzip"  # whitenoise's compressed copy
    topbar_border = page.eval_on_selector(".topbar", "e => getComputedStyle(e).borderBottomStyle")
    assert topbar_border == "solid"  # site.css applied
    page.check("#id_consent")
    page.click("text=Agree and continue")
    page.wait_for_url("**/about/")
    admin = browser.new_page()
    admin_css: list[int] = []
    admin.on("response", lambda r: admin_css.append(r.status) if "/static/admin/css/" in r.url else None)
    admin.goto(url + "/admin/login/")
    assert admin_css and set(admin_css) == {200}
    health = urllib.request.urlopen(url + "/healthz", timeout=10)
    assert health.status == 200
    # the vendored plotly.js (metaeval.assets), collected under its hashed name
    hashed = json.loads((tmp_path / "static" / "staticfiles.json").read_text(encoding="utf-8"))["paths"][PLOTLY_JS]
    assert hashed != PLOTLY_JS and hashed.startswith(PLOTLY_JS.removesuffix(".min.js") + ".")
    gz = urllib.request.Request(f"{url}/static/{hashed}", headers={"Accept-Encoding": "gzip"})
    with urllib.request.urlopen(gz, timeout=30) as plotly:
        assert plotly.status == 200 and plotly.headers["Content-Encoding"] == "gzip"
        assert hashlib.sha256(gzip.decompress(plotly.read())).hexdigest() == PLOTLY_SHA256
