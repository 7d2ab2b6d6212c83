"""Every figure of the report page built in Python (issue 30 item 3): one per element id (and per switch option),
each trace's values the report's numbers, hover texts in the report's number format, names escaped, narrow-screen
changes in ``layout.meta``, and the compact JSON the page embeds."""
from __future__ import annotations

import json

import pytest

from metaeval.assets import PLOTLY_TRACES
from metaeval.core import display
from metaeval.core.display.figures.style import PALETTE, lines, wrap
from metaeval.core.perseval.figures import FIGURES_VERSION, figures_json, report_figures

SYSTEMS = ("Alpha <b>Net</b>", "Beta", "Gamma")


def _report() -> dict:
    """A small report with every section the page draws: three systems, two automatic measures and one HJ measure,
    three coefficients, two β values, stability, raters, a pairwise section with two criteria, e-DINS and probes."""
    leaderboard = [{"system": s, "measure": m, "value": v, "low": v - 0.05, "high": v + 0.1}
                   for m, values in (("rouge_l", (0.2, 0.5, 0.1)), ("jsd", (0.3, 0.1, 0.05)))
                   for s, v in zip(SYSTEMS, values, strict=True)]
    correlations = [{"method": method, "auto_measure": a, "hj_measure": "hj:rouge_l", "r": r, "low": r - 0.2,
                     "high": min(1.0, r + 0.1), "p": p, "n": 3, "strength": "weak"}
                    for method, shift in (("pearson", 0.0), ("spearman", 0.1), ("kendall", -0.1))
                    for a, r, p in (("rouge_l", 0.5 + shift, 0.0004), ("jsd", -0.25 + shift, 0.5))]
    beta = [{"auto_measure": a, "hj_measure": "hj:rouge_l", "beta": b, "pearson": 0.1 * b, "spearman": 0.2 * b,
             "kendall": 0.3 * b} for a in ("rouge_l", "jsd") for b in (1.0, 1.5)]
    stability = [{"measure": m, "definition": d, "level": level, "stability": s}
                 for m in ("rouge_l", "jsd") for d in ("paper", "authors")
                 for level, s in ((100, 1.0), (50, 0.8), (10, None))]
    ratings = [{"criterion": c, "system": s, "elo_median": 1000 + 10 * i, "elo_ci_low": 990 + 10 * i,
                "elo_ci_high": 1010 + 10 * i, "bt": 1000 + 20 * i, "bt_ci_low": 980 + 20 * i,
                "bt_ci_high": 1020 + 20 * i, "wins": i, "ties": 1, "losses": 2 - i, "games": 3}
               for c in ("overall", "quality") for i, s in enumerate(SYSTEMS)]
    win = [{"criterion": c, "system": s, "opponent": o, "win_fraction": 0.25 if s < o else 0.75, "games": 4}
           for c in ("overall", "quality") for s in SYSTEMS for o in SYSTEMS if s != o]
    consistency = [{"criterion": c, "model_a": "Gamma", "model_b": "Beta", "n": n, "consistency": 0.5 + n / 100,
                    "sensitivity": n / 100, "pool": 20, "wins_a": 12, "wins_b": 6, "ties": 2}
                   for c in ("overall", "quality") for n in (20, 5, 10)]
    return {
        "parameters": {"measures": ["rouge_l", "jsd"], "hj_measures": ["hj:rouge_l"]},
        "leaderboard": leaderboard, "leaderboard_label": "PerSEval", "correlations": correlations,
        "heatmap_method": "pearson", "beta_ablation": beta, "stability": stability,
        "raters": {"alpha": 0.4, "per_rater": [{"rater": "r<1>", "agreement": 0.6, "alpha_without": 0.35},
                                                {"rater": "r2", "agreement": 0.2, "alpha_without": 0.5}]},
        "pairwise": {"judgments": {"criteria": ["overall", "quality"]}, "parameters": {"init": 1000},
                     "ratings": ratings, "win_fraction": win, "consistency": consistency},
        "edins": {"curve": [{"system": s, "gamma": g, "edins": 0.1 * i + g} for i, s in enumerate(SYSTEMS)
                            for g in (0.0, 0.5, 1.0)]},
        "probes": {"measure": "rouge_l", "styles": ["plain", "profile"], "models": ["m1", "m2"],
                   "grid": [{"model": "m1", "style": "plain", "egises": 0.12345},
                            {"model": "m1", "style": "profile", "egises": 0.1},
                            {"model": "m2", "style": "plain", "egises": 0.2}]},
        "tables": {},
    }


@pytest.fixture(scope="module")
def figures() -> dict:
    return {key: json.loads(built.to_json()) for key, built in report_figures(_report()).items()}


def test_every_figure_of_the_page_is_built(figures) -> None:
    page = {"fig-leaderboard", "fig-heatmap", "fig-beta", "fig-stability", "fig-raters", "fig-pairwise-forest",
            "fig-pairwise-heatmap", "fig-pairwise-consistency", "fig-edins-gamma", "fig-probes-grid"}
    options = {f"fig-{name}@{m}" for name in ("heatmap", "beta") for m in ("pearson", "spearman", "kendall")}
    options |= {f"fig-heatmap@{m}@narrow" for m in ("pearson", "spearman", "kendall")}  # 2 automatic, 1 HJ measure
    options |= {f"fig-pairwise-{name}@{c}" for name in ("forest", "heatmap", "consistency")
                for c in ("overall", "quality")}
    assert set(figures) == page | options
    for key, figure in figures.items():  # every axis titled, the report's font, the page's left-aligned title
        layout = figure["layout"]
        assert layout["xaxis"]["title"]["text"] and layout["yaxis"]["title"]["text"], key
        assert layout["title"]["text"] and layout["title"]["x"] == 0, key
        assert layout["xaxis"]["automargin"] and layout["xaxis"]["title"]["standoff"] == 10, key
    assert figures["fig-heatmap"] == figures["fig-heatmap@pearson"]
    assert figures["fig-pairwise-forest"] == figures["fig-pairwise-forest@overall"]
    assert isinstance(FIGURES_VERSION, int)


def test_every_trace_type_drawn_is_in_the_vendored_plotly_bundle() -> None:
    """The page's plotly.js is a partial bundle (``metaeval.assets.PLOTLY_TRACES``): every figure of a report with
    every section, the pair-accuracy views included, uses only its trace types, and uses each of them."""
    report = _report()
    report["tables"] = {
        "pair_accuracy": [{"metric": "rouge_l", "human": "hj:rouge_l", "level": "system", "accuracy": 0.7,
                           "accuracy_low": 0.6, "accuracy_high": 0.8, "acc_eq": 0.65, "spa": 0.72}],
        "close_pairs": [{"metric": "rouge_l", "human": "hj:rouge_l", "bucket_low": low, "bucket_high": high,
                         "accuracy": 0.6, "pairs": 4, "kendall": 0.2} for low, high in ((0, 0.05), (0.05, None))]}
    built = report_figures(report)
    assert {"fig-pair-accuracy", "fig-close-pairs"} <= set(built)
    used = {key: {trace["type"] for trace in json.loads(figure.to_json())["data"]} for key, figure in built.items()}
    assert set().union(*used.values()) == set(PLOTLY_TRACES), used
    empty = report_figures({"tables": {}})  # figures without data draw no trace of another type
    assert set().union(*({trace.type for trace in figure.data} for figure in empty.values())) <= set(PLOTLY_TRACES)


def test_the_leaderboard_draws_the_reports_values_best_first(figures) -> None:
    report = _report()
    rouge, jsd = figures["fig-leaderboard"]["data"]
    order = ["Beta", "Alpha <b>Net</b>", "Gamma"]  # by rouge_l, the first measure
    assert rouge["y"] == [wrap(s) for s in order] and "&lt;b&gt;" in rouge["y"][1]
    value = {(r["system"], r["measure"]): r for r in report["leaderboard"]}
    assert rouge["x"] == [value[(s, "rouge_l")]["value"] for s in order]
    assert jsd["x"] == [value[(s, "jsd")]["value"] for s in order]
    assert rouge["error_x"]["arrayminus"] == pytest.approx([0.05] * 3)
    assert rouge["error_x"]["array"] == pytest.approx([0.1] * 3)
    assert rouge["customdata"][0] == ["Beta", "0.5000", "0.4500", "0.6000"]
    assert rouge["name"] == display.measure_name("rouge_l") and rouge["marker"]["color"] == PALETTE[0]
    assert jsd["marker"]["color"] == PALETTE[1] and "%{customdata[0]}" in rouge["hovertemplate"]
    narrow = figures["fig-leaderboard"]["layout"]["meta"]["narrow"]["layout"]
    assert narrow["legend"]["orientation"] == "h" and narrow["xaxis"]["title"]["text"] == "PerSEval"


def test_the_heatmap_and_beta_per_coefficient(figures) -> None:
    report = _report()
    for method, name in (("pearson", "Pearson r"), ("spearman", "Spearman ρ"), ("kendall", "Kendall τ")):
        cells = [c for c in report["correlations"] if c["method"] == method]
        heatmap = figures[f"fig-heatmap@{method}"]
        (trace,) = heatmap["data"]
        assert trace["z"] == [[c["r"] for c in cells]]  # one HJ measure (row), two automatic (columns)
        fmt = display.fmt_number
        interval = f"[{fmt(cells[0]['low'])}, {fmt(cells[0]['high'])}]"
        assert trace["text"][0][0] == f"<b>{fmt(cells[0]['r'])}</b> ⚠<br>{interval}<br>p < 0.001"
        assert trace["text"][0][1].endswith("<br>p = 0.500")
        assert name in heatmap["layout"]["title"]["text"] and trace["colorbar"]["title"]["text"] == name
        assert trace["customdata"][0][0][:3] == [fmt(cells[0]["r"]), interval, "p < 0.001"]
        compact = heatmap["layout"]["meta"]["cells"]["steps"][0]
        assert compact["below"] == 95 and compact["data"][0]["text"][0][1] == f"<b>{fmt(cells[1]['r'])}</b> ⚠"
        flipped = figures[f"fig-heatmap@{method}@narrow"]["data"][0]
        assert flipped["z"] == [[c["r"]] for c in cells]
        assert figures[f"fig-heatmap@{method}@narrow"]["layout"]["yaxis"]["title"]["text"] == "Automatic measure (X)"
        beta = figures[f"fig-beta@{method}"]
        assert [t["y"] for t in beta["data"]] == [[r[method] for r in report["beta_ablation"] if r["auto_measure"] == a]
                                                  for a in ("rouge_l", "jsd")]
        assert beta["layout"]["yaxis"]["title"]["text"] == f"{name} with HJ"
        assert [t["line"]["width"] for t in beta["data"]] == [5, 4.3]  # the widest first


def test_stability_raters_edins_probes(figures) -> None:
    stability = figures["fig-stability"]["data"]
    assert [t["name"] for t in stability] == [f"{display.measure_name(m)} ({d})" for m in ("rouge_l", "jsd")
                                              for d in ("paper", "authors' code")]
    assert stability[0]["x"] == [100, 50] and stability[0]["y"] == [1.0, 0.8]  # a missing stability left out
    assert stability[0]["opacity"] == 0.45 and stability[1]["line"]["dash"] == "dash"
    assert stability[1]["marker"]["symbol"] == "circle-open"
    bars, diamonds = figures["fig-raters"]["data"]
    assert bars["x"] == ["r&lt;1&gt;", "r2"] and bars["y"] == [0.6, 0.2] and diamonds["y"] == [0.35, 0.5]
    assert figures["fig-raters"]["layout"]["shapes"][0]["y0"] == 0.4
    assert "0.4000" in figures["fig-raters"]["layout"]["title"]["text"]
    edins = figures["fig-edins-gamma"]["data"]
    assert len(edins) == 3 and edins[1]["y"] == pytest.approx([0.1, 0.6, 1.1])
    grid = figures["fig-probes-grid"]["data"][0]
    assert grid["z"] == [[0.12345, 0.1], [0.2, None]] and grid["text"] == [["0.1235", "0.1000"], ["0.2000", ""]]
    assert grid["colorscale"][0] == [0, "rgb(5,10,172)"]  # plotly.js's Blues: dark = low = more personalised


def test_the_pairwise_figures_per_criterion(figures) -> None:
    report = _report()["pairwise"]
    forest = figures["fig-pairwise-forest@quality"]
    elo, bt = forest["data"]
    assert elo["y"] == [wrap(s) for s in ("Gamma", "Beta", "Alpha <b>Net</b>")]  # best Bradley-Terry first
    assert bt["x"] == [1040, 1020, 1000] and bt["error_x"]["array"] == [20, 20, 20]
    assert forest["layout"]["shapes"][0]["x0"] == 1000 and "Quality" in forest["layout"]["title"]["text"]
    heat = figures["fig-pairwise-heatmap@overall"]["data"][0]
    assert heat["z"][0] == [None, 0.75, 0.75] and heat["text"][0] == ["", "0.75", "0.75"]
    assert heat["zmid"] == 0.5 and figures["fig-pairwise-heatmap@overall"]["layout"]["meta"]["cells"]["across"] == 3
    narrow = figures["fig-pairwise-heatmap@overall"]["layout"]["meta"]["narrow"]
    assert narrow["data"][0]["colorbar"]["orientation"] == "h"
    curves = figures["fig-pairwise-consistency@overall"]
    solid, dashed = curves["data"]
    assert solid["x"] == [5, 10, 20] and solid["y"] == pytest.approx([0.55, 0.6, 0.7])
    assert dashed["y"] == pytest.approx([0.05, 0.1, 0.2]) and dashed["showlegend"] is False
    assert curves["layout"]["xaxis"]["ticktext"] == ["5", "10", "20"]
    assert solid["customdata"][0][5:] == ["Gamma", "Beta"] and len(report["consistency"]) == 6


def test_a_report_without_sections_gets_empty_figures_that_say_so() -> None:
    built = report_figures({"parameters": {}})
    assert set(built) == {"fig-leaderboard", "fig-heatmap", "fig-heatmap@pearson", "fig-beta", "fig-beta@pearson",
                          "fig-stability", "fig-raters"}
    assert all(not figure.data and figure.layout.meta["empty"] for figure in built.values())


def test_the_pages_json_is_compact_and_leaves_out_repeated_figures() -> None:
    report = _report()
    text = figures_json(report)
    assert "\n" not in text and '", "' not in text and '": {' not in text and "], [" not in text  # no spaces
    assert "<" not in text and ">" not in text  # safe inside <script>
    parsed = json.loads(text)
    assert "fig-heatmap" not in parsed and "fig-heatmap@kendall" in parsed and "fig-leaderboard" in parsed
    assert parsed["fig-heatmap@pearson"]["data"][0]["z"] == [[0.5, -0.25]]
    assert len(text) < len(json.dumps({k: json.loads(f.to_json()) for k, f in report_figures(report).items()},
                                      indent=1))


def test_long_names_wrap_on_word_and_camel_case_breaks() -> None:
    assert lines("PersonalisedPointerGeneratorNetwork", 12) == ["Personalised", "Pointer", "Generator", "Network"]
    assert lines("short", 24) == ["short"]
    assert wrap("a_very_long_system_name_with<tags>", 10).count("<br>") >= 2 and "&lt;tags&gt;" in wrap("<tags>")
