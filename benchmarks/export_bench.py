"""Export benchmark: a preference study with 300,000 stored judgments (half participants', half LLM judge runs'),
exported as the judgment file through the page's view, through ``manage.py export_judgments`` and, with
``--serve``, through gunicorn (DEBUG off, one sync worker, its default 30 s timeout) over HTTP.

    .venv/bin/python benchmarks/export_bench.py [--judgments 300000] [--database URL] [--serve] [--formats csv,jsonl]

``--database``: a PostgreSQL URL (``postgres://postgres@127.0.0.1:5432/perseval_export_bench``; the database is
created when missing) or, by default, a new SQLite file in a temporary folder. The data is bulk-created once per
database (``tests/survey/bulk_judgments.py``) and reused while its counts match. Prints the machine and, per path,
seconds to the first byte and in all, and rows/s.
"""
from __future__ import annotations

import argparse
import os
import platform
import secrets
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SLUG = "export-bench"


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--judgments", type=int, default=300_000, help="in all; half participants', half LLM")
    parser.add_argument("--database", default="", help="a postgres:// URL (default: a new SQLite file)")
    parser.add_argument("--serve", action="store_true", help="also time the download through gunicorn")
    parser.add_argument("--formats", default="csv,jsonl")
    return parser.parse_args()


def _environment(database: str) -> str:
    """Settings for a production-like process (DEBUG off) on ``database``; returns its URL."""
    if not database:
        database = f"sqlite:///{tempfile.mkdtemp(prefix='export-bench-')}/bench.sqlite3"
    elif database.startswith("postgres"):
        _create_postgres(database)
    os.environ.update({"DATABASE_URL": database, "DEBUG": "0", "SECRET_KEY": os.environ.get("SECRET_KEY") or
                       secrets.token_urlsafe(40), "CELERY_EAGER": "1", "LOG_LEVEL": "WARNING",
                       "DJANGO_SETTINGS_MODULE": "config.settings", "ALLOWED_HOSTS": "127.0.0.1",
                       "STATIC_ROOT": os.environ.get("STATIC_ROOT") or tempfile.mkdtemp(prefix="export-bench-static-")})
    return database


def _create_postgres(url: str) -> None:
    import psycopg

    base, name = url.rsplit("/", 1)
    with psycopg.connect(f"{base}/postgres", autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')


def _machine() -> str:
    from django.db import connection

    cpu = platform.processor() or platform.machine()
    try:
        model = next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                     if line.startswith("model name"))
    except (OSError, StopIteration):
        model = cpu
    with connection.cursor() as cursor:
        cursor.execute("SELECT sqlite_version()" if connection.vendor == "sqlite" else "SHOW server_version")
        version = cursor.fetchone()[0]
    return (f"{platform.node()}: {model}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
            f"{connection.vendor} {version}")


def _study(judgments: int):
    from survey.models import JudgeJudgment, Judgment, Study
    from tests.survey.bulk_judgments import add_human_judgments, add_llm_judgments, bulk_preference_study

    human, llm = judgments // 2, judgments - judgments // 2
    study = Study.objects.filter(slug=SLUG).first()
    if study is not None:
        stored = (Judgment.objects.filter(assignment__questionnaire__study=study).count(),
                  JudgeJudgment.objects.filter(judge_run__study=study).count())
        if stored == (human, llm):
            print(f"reusing study {SLUG}: {human:,} participants' and {llm:,} LLM judgments")
            return study
        study.delete()
        from survey.models import Dataset

        Dataset.objects.filter(name=f"{SLUG}-data").delete()
    started = time.perf_counter()
    # 20 documents x 10 readers = 200 cases; 3 system pairs x 100 cases = 300 items in questionnaires of 10
    study = bulk_preference_study(SLUG, docs=20, readers=10, per_pair=100, per_q=10)
    people = add_human_judgments(study, human)
    runs = add_llm_judgments(study, llm)
    print(f"built study {SLUG}: {human:,} judgments of {people:,} participants, {llm:,} of {runs} judge runs "
          f"({time.perf_counter() - started:.1f} s)")
    return study


def _researcher():
    from django.contrib.auth.models import Group, User

    user, _ = User.objects.get_or_create(username="export-bench")
    user.groups.add(Group.objects.get_or_create(name="researcher")[0])
    return user


def _report(path: str, fmt: str, first: float, total: float, lines: int, size: int) -> None:
    rows = lines - (fmt == "csv")
    print(f"{path:<38} {fmt:<5} {rows:>9,} rows  {size / 1e6:7.1f} MB  first byte {first:6.2f} s  "
          f"all {total:6.2f} s  {rows / total:>9,.0f} rows/s")


def _through_view(fmt: str) -> None:
    from django.test import Client

    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(_researcher())
    started = time.perf_counter()
    response = client.get(f"/research/studies/{SLUG}/judgments.{fmt}")
    assert response.status_code == 200, response.status_code
    first, lines, size = None, 0, 0
    for piece in response.streaming_content if response.streaming else [response.content]:  # code before streaming
        first = first if first is not None else time.perf_counter() - started
        lines += piece.count(b"\n")
        size += len(piece)
    _report("view (Django test client)", fmt, first or 0.0, time.perf_counter() - started, lines, size)


def _through_command(fmt: str) -> None:
    from django.core.management import call_command

    with tempfile.NamedTemporaryFile(suffix=f".{fmt}") as out:
        started = time.perf_counter()
        call_command("export_judgments", "--study", SLUG, "--format", fmt, "--out", out.name,
                     stderr=open(os.devnull, "w"))
        total = time.perf_counter() - started
        data = Path(out.name).read_bytes()
    _report("manage.py export_judgments", fmt, total, total, data.count(b"\n"), len(data))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _through_gunicorn(formats: list[str]) -> None:
    """gunicorn as ``make serve`` runs it (DEBUG off), one sync worker with the default 30 s timeout, logged in
    by a session cookie."""
    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.sessions.backends.db import SessionStore
    from django.db import connections

    user = _researcher()
    session = SessionStore()
    session[SESSION_KEY], session[BACKEND_SESSION_KEY] = str(user.pk), "django.contrib.auth.backends.ModelBackend"
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.create()
    connections.close_all()  # SQLite: let the server's process write
    port = _free_port()
    env = {**os.environ, "SECURE_COOKIES": "0", "ALLOWED_HOSTS": "127.0.0.1"}
    server = subprocess.Popen([str(Path(sys.executable).parent / "gunicorn"), "config.wsgi", "--bind",
                               f"127.0.0.1:{port}", "--workers", "1", "--timeout", "30"], cwd=ROOT, env=env,
                              stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1)
                break
            except OSError:
                time.sleep(0.2)
        for fmt in formats:
            request = urllib.request.Request(f"http://127.0.0.1:{port}/research/studies/{SLUG}/judgments.{fmt}",
                                             headers={"Cookie": f"{settings.SESSION_COOKIE_NAME}="
                                                                f"{session.session_key}"})
            started = time.perf_counter()
            with urllib.request.urlopen(request, timeout=120) as response:
                assert response.status == 200, response.status
                first, lines, size = None, 0, 0
                while piece := response.read(1 << 16):
                    first = first if first is not None else time.perf_counter() - started
                    lines += piece.count(b"\n")
                    size += len(piece)
            _report("gunicorn (1 sync worker, timeout 30)", fmt, first or 0.0, time.perf_counter() - started,
                    lines, size)
    finally:
        server.terminate()
        _out, errors = server.communicate(timeout=30)
        killed = [line for line in errors.splitlines() if "WORKER TIMEOUT" in line or "SIGKILL" in line]
        print("gunicorn: " + ("; ".join(killed) if killed else "no worker timeout"))


def main() -> None:
    args = _arguments()
    url = _environment(args.database)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    print(_machine())
    print(f"database: {url.split('@')[-1]}")
    _study(args.judgments)
    formats = [fmt for fmt in args.formats.split(",") if fmt]
    for fmt in formats:
        _through_view(fmt)
        _through_command(fmt)
    if args.serve:
        _through_gunicorn(formats)


if __name__ == "__main__":
    main()
