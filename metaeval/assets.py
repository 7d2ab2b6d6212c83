"""The static assets the report pages need and their one version: plotly.js, fetched by `make plotly` (the Makefile
reads PLOTLY_VERSION and PLOTLY_SHA256 from this file)."""

PLOTLY_VERSION = "4.1.2"
PLOTLY_SHA256 = "4d4a67f627e33fa3b5296134210d5ba51e5312d7d287436fcc29eb533018e1b8"
#: path under static/
PLOTLY_JS = f"vendor/plotly-{PLOTLY_VERSION}.min.js"
REPORT_JS = "metaeval/report.js"
