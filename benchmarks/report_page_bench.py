"""The report page's speed as a researcher meets it (issue 34): the demo's full report (``make demo``: five
measures, ratings, the demo judgment set) served by gunicorn on 127.0.0.1 with DEBUG off, loaded in chromium.

Prints the server time for the page (first request after start, then the median of later ones), the bytes sent (the
HTML, plain and gzip, and the static files the browser fetched), the time from navigation to the first figure drawn
and to the last (every figure scrolled into view in turn, as soon as the one before is drawn) and to the tables in
place, cold (a browser just started, a new profile, first request), cold again ``--repeat`` times in a new profile
each of the browser now running (median and range), and warm (reloaded in the first profile, which keeps no code
cache), then four loads in a profile kept on disk (as a researcher's own browser: V8's code cache for plotly.js from
the third load), and the offline HTML's size. Run with ``uptime`` quiet::

    .venv/bin/python benchmarks/report_page_bench.py [--data /tmp/report-bench] [--repeat 5]

``--data``: a folder for the database, static files and caches, kept between runs (the demo report is computed the
first time only, a few minutes). Needs /usr/bin/chromium (``make browser``) and Playwright.
"""
from __future__ import annotations

import argparse
import gzip
import http.cookiejar
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PASSWORD = "report-bench-pass-1"
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
#: records, from the first script on, when each figure element first holds a drawn plot
WATCH = """
window.__drawn = {};
new MutationObserver(() => {
  document.querySelectorAll("[id^='fig-']").forEach((el) => {
    if (!(el.id in window.__drawn) && el.querySelector('.main-svg')) { window.__drawn[el.id] = performance.now(); }
  });
}).observe(document, {childList: true, subtree: true});
"""


def _env(data: Path) -> dict[str, str]:
    env = {**os.environ, "DEBUG": "0", "SECRET_KEY": "report-bench-" + "k" * 40, "SECURE_COOKIES": "0",
           "DATABASE_URL": f"sqlite:///{data / 'db.sqlite3'}", "STATIC_ROOT": str(data / f"static-{os.getpid()}"),
           "ALLOWED_HOSTS": "127.0.0.1", "LOG_LEVEL": "WARNING", "METAEVAL_CACHE_DIR": str(data / "cache"),
           "DEMO_RESEARCHER_PASSWORD": PASSWORD, "DEMO_ADMIN_PASSWORD": PASSWORD + "-admin"}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    return env


def _manage(env: dict[str, str], *args: str) -> None:
    subprocess.run([sys.executable, str(ROOT / "manage.py"), *args], env=env, cwd=ROOT, check=True, timeout=1800,
                   stdout=subprocess.DEVNULL)


def prepare(data: Path, env: dict[str, str]) -> None:
    """The database with the demo's full report (once), this checkout's static files (every run)."""
    data.mkdir(parents=True, exist_ok=True)
    if not (data / "ready").exists():
        _manage(env, "migrate", "--noinput", "-v0")
        _manage(env, "load_demo")
        _manage(env, "metaeval_report", "--dataset", "demo", "--study", "demo", "--seed", "2026", "--unless-exists",
                "--judgments", "demo", "--measures", "rouge_l,rouge_su4,bleu4,jsd,bertscore", "--aux", "rouge_l,jsd")
        (data / "ready").write_text("ok\n")
    _manage(env, "collectstatic", "--noinput", "-v0")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _opener(url: str, jar: http.cookiejar.CookieJar) -> urllib.request.OpenerDirector:
    """A logged-in researcher's session (the login form, with its CSRF token), its cookies in ``jar``."""
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    page = opener.open(f"{url}/accounts/login/").read().decode()
    token = page.split('name="csrfmiddlewaretoken" value="', 1)[1].split('"', 1)[0]
    body = urllib.parse.urlencode({"username": "researcher", "password": PASSWORD, "csrfmiddlewaretoken": token})
    opener.open(urllib.request.Request(f"{url}/accounts/login/", data=body.encode(), headers={"Referer": url}))
    return opener


def _get(opener: urllib.request.OpenerDirector, url: str, gzip_ok: bool = False) -> tuple[float, bytes]:
    request = urllib.request.Request(url, headers={"Accept-Encoding": "gzip"} if gzip_ok else {})
    start = time.perf_counter()
    with opener.open(request) as response:
        body = response.read()
    return time.perf_counter() - start, body


def _load(context, url: str) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """Open the page, then scroll each figure into view as soon as the one before is drawn; ms from navigation."""
    page = context.new_page()
    sent = {"static": 0}

    def count(response) -> None:  # type: ignore[no-untyped-def]
        if "/static/" in response.url:
            sent["static"] += int(response.headers.get("content-length") or 0)

    page.on("response", count)
    page.goto(url, wait_until="load")
    ids = page.evaluate("() => Array.from(document.querySelectorAll(\"[id^='fig-']\")).map((el) => el.id)")
    page.wait_for_function("() => Object.keys(window.__drawn).length > 0", timeout=60000)
    for fig in ids:
        page.evaluate("(id) => document.getElementById(id).scrollIntoView({block: 'center'})", fig)
        page.wait_for_function("(id) => id in window.__drawn", arg=fig, timeout=60000)
    drawn = page.evaluate("() => window.__drawn")
    page.wait_for_function("() => performance.getEntriesByName('report-tables').length > 0", timeout=60000)
    steps = page.evaluate("""() => { const n = performance.getEntriesByType('navigation')[0];
        const at = (name) => { const m = performance.getEntriesByName(name)[0]; return m ? m.startTime : NaN; };
        return {response: n.responseEnd, parsed: n.domInteractive, script: at('report-js'),
                plotly: at('plotly-ready'), tables: at('report-tables')}; }""")
    page.close()
    return {"first": min(drawn.values()), "last": max(drawn.values()), "figures": len(drawn),
            "static": sent["static"], **steps}


def _watched(context, jar: http.cookiejar.CookieJar, url: str):  # type: ignore[no-untyped-def]
    """``context`` recording when each figure is drawn (WATCH), logged in with the cookies of ``jar``."""
    context.add_init_script(WATCH)
    context.add_cookies([{"name": c.name, "value": c.value or "", "url": url} for c in jar])
    return context


def _spread(loads: list[dict[str, float]], key: str) -> str:
    """The median of ``key`` over ``loads`` and its range, in seconds."""
    values = [load[key] / 1000 for load in loads]
    return f"{statistics.median(values):.2f} s ({min(values):.2f}-{max(values):.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path("/tmp/report-bench"))
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    env = _env(args.data)
    prepare(args.data, env)
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    server = subprocess.Popen([str(Path(sys.executable).parent / "gunicorn"), "config.wsgi", "--bind",
                               f"127.0.0.1:{port}", "--workers", "1"], env=env, cwd=ROOT,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        for _ in range(300):
            try:
                urllib.request.urlopen(url + "/healthz", timeout=2)
                break
            except OSError:
                if server.poll() is not None:
                    sys.exit("gunicorn exited: " + server.stderr.read().decode()[-2000:])  # type: ignore[union-attr]
                time.sleep(0.2)
        jar = http.cookiejar.CookieJar()
        opener = _opener(url, jar)
        run = _run_id(opener, url)
        page_url = f"{url}/research/runs/{run}/report/"
        cold, html = _get(opener, page_url)
        warm = statistics.median(_get(opener, page_url)[0] for _ in range(args.repeat))
        _, zipped = _get(opener, page_url, gzip_ok=True)
        plain_size = len(html)
        gzip_size = len(zipped) if zipped[:2] == b"\x1f\x8b" else len(gzip.compress(html))
        _, offline = _get(opener, f"{url}/research/runs/{run}/report.html")
        from playwright.sync_api import sync_playwright

        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True,
                                        args=["--no-sandbox", "--disable-gpu"])
            context = _watched(browser.new_context(viewport={"width": 1280, "height": 900}), jar, url)
            browser_cold = _load(context, page_url)
            browser_warm = [_load(context, page_url) for _ in range(max(1, args.repeat // 2))]
            # cold again, each in a new profile of the browser now running (empty cache, no code cache, its own
            # renderer process), as a researcher whose browser is already open meets the page the first time
            browser_new = []
            for _ in range(args.repeat):
                fresh = _watched(browser.new_context(viewport={"width": 1280, "height": 900}), jar, url)
                browser_new.append(_load(fresh, page_url))
                fresh.close()
            browser.close()
            # a browser profile kept on disk, as a researcher's own browser: from the third load on, V8 runs
            # plotly.js from the code cache it made at the second (a Playwright context, above, keeps none)
            with tempfile.TemporaryDirectory() as profile:
                kept = _watched(p.chromium.launch_persistent_context(
                    profile, executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"],
                    viewport={"width": 1280, "height": 900}), jar, url)
                browser_kept = [_load(kept, page_url) for _ in range(4)]
                kept.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(env["STATIC_ROOT"], ignore_errors=True)  # this run's collected static files (~40 MB)
    with open("/proc/loadavg", encoding="ascii") as handle:
        load = " ".join(handle.read().split()[:3])
    print(f"report page of run {run}, load average {load}")
    print(f"server: {cold:.3f} s first request, {warm:.3f} s median of {args.repeat} more")
    print(f"HTML sent: {plain_size / 1e6:.2f} MB ({gzip_size / 1e6:.2f} MB gzip); static fetched cold "
          f"{browser_cold['static'] / 1e6:.2f} MB")
    print(f"figures drawn: {int(browser_cold['figures'])}")
    print(f"cold: first figure {browser_cold['first'] / 1000:.2f} s, last {browser_cold['last'] / 1000:.2f} s "
          f"(HTML received {browser_cold['response'] / 1000:.2f} s, parsed {browser_cold['parsed'] / 1000:.2f} s, "
          f"report.js started {browser_cold['script'] / 1000:.2f} s, "
          f"plotly.js ran {browser_cold['plotly'] / 1000:.2f} s; "
          f"tables in place {browser_cold['tables'] / 1000:.2f} s)")
    print(f"cold, a new profile in the running browser, {len(browser_new)} loads: first figure median "
          f"{_spread(browser_new, 'first')}, last median {_spread(browser_new, 'last')}; plotly.js ran "
          f"{_spread(browser_new, 'plotly')}")
    first = statistics.median(b["first"] for b in browser_warm) / 1000
    last = statistics.median(b["last"] for b in browser_warm) / 1000
    steps = {key: statistics.median(b[key] for b in browser_warm) / 1000
             for key in ("response", "parsed", "script", "plotly", "tables")}
    print(f"warm: first figure {first:.2f} s, last {last:.2f} s (median of {len(browser_warm)}; HTML received "
          f"{steps['response']:.2f} s, parsed {steps['parsed']:.2f} s, report.js started {steps['script']:.2f} s, "
          f"plotly.js ran {steps['plotly']:.2f} s; tables in place {steps['tables']:.2f} s)")
    print("kept profile, loads 1 to 4: " + "; ".join(
        f"{b['first'] / 1000:.2f} s / {b['last'] / 1000:.2f} s (plotly.js ran {b['plotly'] / 1000:.2f} s)"
        for b in browser_kept))
    print(f"offline HTML: {len(offline) / 1e6:.2f} MB")


def _run_id(opener: urllib.request.OpenerDirector, url: str) -> str:
    """The newest finished report run's id, from the runs list."""
    page = opener.open(f"{url}/research/runs/").read().decode()
    for part in page.split("/research/runs/")[1:]:
        head = part.split("/", 1)[0]
        if head.isdigit() and f"/research/runs/{head}/report/" in page:
            return head
    sys.exit("no report run on the runs page")


if __name__ == "__main__":
    main()
