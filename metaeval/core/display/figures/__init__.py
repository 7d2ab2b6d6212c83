"""Every figure of the report page, the offline HTML and a notebook, built once in Python with plotly: one module
per part of the report (``perseval``: leaderboard, correlation heatmap, β ablation, stability, raters; ``pairwise``;
``pairs``: Table 2's pairwise-accuracy view; ``sections``: e-DINS and prompt probes), the shared look in ``style``.
The public entry is :func:`metaeval.core.perseval.figures.report_figures`. No Django."""
