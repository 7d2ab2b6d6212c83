"""`make run` on a plain machine (issue 29): Python 3.11 and make, but no apt-get, no npm and no WordNet.

The whole target runs as a newcomer runs it, with a PATH of symlinks to every tool here except apt-get, apt, npm,
npx and node (tests/plain_machine.py): migrate, the WordNet step (which says what METEOR needs and goes on),
load_demo, the demo report run (its measures need no WordNet), then the dev server and the Celery worker. The
test then uses it: the participant page, the vendored plotly.js (the pinned file, no npm), the demo report
(page and offline HTML), and a report run queued with METEOR that the worker of `make run` finishes, listing
METEOR as unavailable with how to install it.

Two things differ from a fresh clone, both outside what is under test: ``VENV`` is a virtualenv whose packages are
this one's (a ``.pth`` file; its stamp is newer than the requirements, so `make install` does nothing, as pip
would need PyPI), and ``WORDNET_SRC`` names an empty folder, since this machine has Debian's WordNet files
installed where a plain one has none.
"""
from __future__ import annotations

import hashlib
import http.cookiejar
import json
import os
import re
import signal
import socket
import subprocess
import sys
import sysconfig
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from django.conf import settings

from metaeval.assets import PLOTLY_BANNER, PLOTLY_JS, PLOTLY_SHA256
from tests.plain_machine import OPTIONAL_TOOLS, path_without

pytestmark = [pytest.mark.e2e, pytest.mark.heavy]
ROOT = Path(settings.BASE_DIR)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _plain_venv(folder: Path) -> Path:
    """A virtualenv with this one's packages (a .pth file) and no nltk_data under its prefix, already installed."""
    subprocess.run([getattr(sys, "_base_executable", sys.executable), "-m", "venv", "--without-pip", str(folder)],
                   check=True, capture_output=True, timeout=120)
    site = Path(sysconfig.get_path("purelib", vars={"base": str(folder), "platbase": str(folder)}))
    (site / "project.pth").write_text(sysconfig.get_path("purelib") + "\n", encoding="utf-8")
    for name, module in (("celery", "celery.__main__"), ("gunicorn", "gunicorn.app.wsgiapp")):
        script = folder / "bin" / name
        script.write_text(f"#!{folder}/bin/python\nimport sys\nfrom {module} import main\nsys.exit(main())\n",
                          encoding="utf-8")
        script.chmod(0o755)
    (folder / ".installed").touch()  # make's install stamp
    return folder


class _Session:
    """A researcher's browser session over plain HTTP (cookies and the CSRF token)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))

    def get(self, path: str) -> tuple[int, bytes]:
        with self.opener.open(self.url + path, timeout=60) as response:
            return response.status, response.read()

    def login(self, username: str, password: str) -> None:
        _, page = self.get("/accounts/login/")
        token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page)
        assert token is not None
        data = urllib.parse.urlencode({"username": username, "password": password, "next": "/research/",
                                       "csrfmiddlewaretoken": token.group(1).decode()}).encode()
        with self.opener.open(self.url + "/accounts/login/", data=data, timeout=60) as response:
            assert response.url.endswith("/research/"), response.url


@pytest.fixture
def plain_run(tmp_path):
    """`make run` with the plain PATH, serving on a free port; yields its URL, environment and output file."""
    venv = _plain_venv(tmp_path / "venv")
    (tmp_path / "home").mkdir()
    (tmp_path / "no-wordnet").mkdir()
    env = {
        "HOME": str(tmp_path / "home"), "PATH": path_without(tmp_path / "bin"), "LANG": "C.UTF-8",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}", "METAEVAL_CACHE_DIR": str(tmp_path / "cache"),
        "CELERY_QUEUE_DIR": str(tmp_path / "queue"), "WORDNET_SRC": str(tmp_path / "no-wordnet"),
        **{key: os.environ[key] for key in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "TMPDIR") if key in os.environ},
    }
    port = _free_port()
    log = tmp_path / "make-run.log"
    with log.open("wb") as out:
        make = subprocess.Popen(["make", "run", f"VENV={venv}", "HOST=127.0.0.1", f"PORT={port}"], cwd=ROOT,
                                env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 600
        while True:
            try:
                urllib.request.urlopen(url + "/s/demo/", timeout=5)
                break
            except OSError:
                if make.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"make run stopped or did not serve (rc {make.poll()}):\n"
                                + log.read_text(encoding="utf-8", errors="replace")[-4000:])
                time.sleep(0.5)
        yield url, {**env, "DEBUG": "1", "CELERY_BROKER_URL": "filesystem://"}, venv, log
    finally:
        # make, its shell, the worker and the dev server: our process group, killed at once (how `make run` stops
        # is not under test here; a SIGTERM's warm shutdown took 6 s, once more than 30 s)
        os.killpg(make.pid, signal.SIGKILL)
        make.wait(timeout=30)


def test_make_run_serves_without_apt_get_npm_or_wordnet(plain_run) -> None:
    url, env, venv, log = plain_run
    for tool in OPTIONAL_TOOLS:
        assert not (Path(env["PATH"]) / tool).exists()
    output = log.read_text(encoding="utf-8")
    # the WordNet step said what METEOR needs and went on; nothing asked for npm
    assert "install_wordnet: apt-get is not on PATH" in output and "going on without WordNet" in output
    assert "METEOR (and --preprocess authors) will be listed as unavailable" in output
    assert "`make wordnet`" in output and "npm" not in output
    assert "report run 1 done (seed 2026)" in output

    with urllib.request.urlopen(url + "/s/demo/", timeout=30) as page:
        assert page.status == 200 and b"consent" in page.read().lower()
    with urllib.request.urlopen(f"{url}/static/{PLOTLY_JS}", timeout=30) as script:
        body = script.read()
        assert script.status == 200 and hashlib.sha256(body).hexdigest() == PLOTLY_SHA256

    researcher = _Session(url)
    researcher.login("researcher", "researcher-demo-pass")
    status, report = researcher.get("/research/runs/1/report/")
    assert status == 200 and f'src="/static/{PLOTLY_JS}"'.encode() in report
    status, offline = researcher.get("/research/runs/1/report.html")
    assert status == 200 and len(offline) > len(body) and f"* {PLOTLY_BANNER}\n".encode() in offline

    # a run with METEOR, queued for the worker that `make run` started: METEOR listed with the fix, the rest scored
    queued = subprocess.run(
        [str(venv / "bin" / "python"), "manage.py", "metaeval_report", "--dataset", "demo", "--study", "demo",
         "--measures", "rouge_l,meteor", "--aux", "rouge_l", "--seed", "7", "--queue"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=True)
    pk = int(re.search(r"queued report run (\d+)", queued.stdout).group(1))  # type: ignore[union-attr]
    deadline = time.monotonic() + 300
    while True:
        progress = json.loads(researcher.get(f"/research/runs/{pk}/status.json")[1])
        if progress["status"] in ("done", "failed", "cancelled") or time.monotonic() > deadline:
            break
        time.sleep(1)
    assert progress["status"] == "done", progress
    _, page = researcher.get(f"/research/runs/{pk}/")
    text = page.decode()
    assert "Unavailable measures (not scored)" in text
    row = re.search(r"<tr><td>meteor</td><td>([^<]*)</td></tr>", text)
    assert row is not None and "WordNet corpus (corpora/wordnet) was not found" in row.group(1)
    assert "make wordnet" in row.group(1) and "apt-get" in row.group(1)
