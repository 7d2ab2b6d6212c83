"""How names are shown: the measures as the paper writes them, methods, the report's column headings and table
captions."""
from __future__ import annotations

#: the measures' names as the paper writes them
MEASURE_NAMES = {
    "rouge_l": "ROUGE-L", "rouge_su4": "ROUGE-SU4", "bleu1": "BLEU-1", "bleu4": "BLEU-4", "jsd": "JSD",
    "meteor": "METEOR", "bertscore": "BERTScore", "infolm": "InfoLM",
}


HJ_PREFIX = "hj:"  # as metaeval.core.perseval.pipeline.HJ_PREFIX (not imported: this module stays light)


FEEDBACK_HJ_PREFIX = "hj-openai:"  # as metaeval.core.perseval.pipeline.FEEDBACK_HJ_PREFIX


METHOD_NAMES = {"pearson": "Pearson r", "spearman": "Spearman ρ", "kendall": "Kendall τ"}


def measure_name(name: str) -> str:
    """``rouge_l`` -> ``ROUGE-L``; ``hj:rouge_l`` -> ``HJ (ROUGE-L)``; ``hj-openai:rouge_l`` -> ``HJ-OpenAI
    (ROUGE-L)``; an unknown name unchanged."""
    if name.startswith(FEEDBACK_HJ_PREFIX):
        return f"HJ-OpenAI ({measure_name(name[len(FEEDBACK_HJ_PREFIX):])})"
    if name.startswith(HJ_PREFIX):
        return f"HJ ({measure_name(name[len(HJ_PREFIX):])})"
    return MEASURE_NAMES.get(name, name)


def method_name(method: str) -> str:
    """``pearson`` -> ``Pearson r`` (ρ and τ for Spearman and Kendall)."""
    return METHOD_NAMES.get(method, method.capitalize())


def _is_measure(name: str) -> bool:
    return name.removeprefix(FEEDBACK_HJ_PREFIX).removeprefix(HJ_PREFIX) in MEASURE_NAMES


#: table columns in words (the CSV keeps the names on the right-hand side of this table)
HEADINGS = {
    "system": "System", "measure": "Measure", "perseval": "PerSEval", "egises": "EGISES", "degress": "DEGRESS",
    "accuracy": "Accuracy distance", "p_acc": "P-Acc", "egises_accuracy": "EGISES accuracy",
    "documents": "Documents", "readers": "Readers", "rows": "Pair rows",
    "auto_measure": "Automatic measure", "hj_measure": "Human-judgment measure", "systems": "Systems",
    "n": "n (systems)", "resample": "Resampled", "n_boot": "Bootstrap samples", "confidence": "Confidence",
    "dropped": "Left out (no score)", "note": "Note", "missing_system": "Bootstrap: drawn system without documents",
    "n_incomplete": "Samples missing a system", "n_discarded": "Samples discarded",
    "measure_a": "Measure A", "measure_b": "Measure B", "delta": "Δ = r(A) − r(B)", "p_value": "p-value",
    "n_permutations": "Permutations", "n_valid": "Valid permutations", "method": "Coefficient",
    "r_a": "r(A, HJ)", "r_b": "r(B, HJ)", "n_systems": "n (systems)", "standardized": "z-scored",
    "alternative": "Alternative", "significant_0.05": "Significant at 0.05",
    "beta": "β", "perseval_measure": "PerSEval measure", "accuracy_measure": "Accuracy measure",
    "aggregate": "Aggregate", "ranking": "Ranking", "hj_ranking": "Human-judgment ranking",
    "borda_sums": "Borda sums", "egises_ranking": "EGISES ranking", "perseval_ranking": "PerSEval ranking",
    "definition": "Definition", "level": "Level (% kept)", "samples": "Draws", "seed": "Seed",
    "draw_seeds": "Seeds of the draws", "set_size": "Documents per draw", "full": "PerSEval, all data",
    "value": "PerSEval, mean of the draws", "level_bias": "Level bias", "level_variance": "Level variance",
    "bias": "δ-bias", "variance": "δ-variance", "scores": "PerSEval per draw", "sample_rows": "Rows per draw",
    "perseval_samples": "PerSEval per draw", "egises_full": "EGISES, all data",
    "egises_bias": "EGISES bias", "egises_variance": "EGISES variance", "egises_samples": "EGISES per draw",
    "epsilon_spearman": "ε-stability (Spearman)", "epsilon_kendall": "ε-stability (Kendall)",
    "delta_bias": "δ-bias", "delta_variance": "δ-variance",
    "rater": "Rater", "studies": "Studies", "n_ratings": "Ratings", "n_questionnaires": "Questionnaires",
    "mean_rating": "Mean rating", "median_seconds": "Median seconds per set", "n_timed": "Timed sets",
    "straightlined_share": "Share straight-lined", "n_straightlined": "Sets straight-lined",
    "longest_run": "Longest run of one rating", "n_shared_items": "Items shared with others",
    "spearman_with_others": "Spearman with the others", "mad_from_others": "Mean abs. deviation from the others",
    "alpha_without": "α without this rater", "alpha_change": "α change without this rater",
    "scope": "Scope", "texts": "Texts", "units": "Units", "quote": "Quote this one", "alpha": "Krippendorff's α",
    "low": "Lower bound", "high": "Upper bound", "n_items": "Rated pairs", "n_pairable_items": "Pairs rated twice+",
    "n_pairable_ratings": "Ratings of those pairs", "n_raters": "Raters", "n_anonymous_ratings": "Anonymous ratings",
    "duplicate_ratings": "Duplicate ratings",
    # rank ranges (conventions sec. 27.4)
    "rank": "Rank", "rank_best": "Best rank (interval)", "rank_worst": "Worst rank (interval)",
    # pairwise judgments (conventions sec. 17-18)
    "criterion": "Criterion", "elo": "Elo (file order)", "elo_median": "Elo, bootstrap median",
    "elo_ci_low": "Elo, 2.5th percentile", "elo_ci_high": "Elo, 97.5th percentile", "bt": "Bradley-Terry",
    "bt_ci_low": "Bradley-Terry, 2.5th percentile", "bt_ci_high": "Bradley-Terry, 97.5th percentile",
    "wins": "Wins", "ties": "Ties", "losses": "Losses", "games": "Games",
    "model_a": "System A", "model_b": "System B", "win": "A wins (% of games)", "tie": "Ties (% of games)",
    "loss": "B wins (% of games)", "cases": "Games (cases)", "opponent": "Opponent",
    "win_fraction": "Win fraction (a tie counts half)", "sensitivity": "Sensitivity", "consistency": "Consistency",
    "repetitions": "Repetitions", "pool": "Games of the pair", "wins_a": "Games A won", "wins_b": "Games B won",
}


#: the columns of the pairwise-accuracy tables (``meta-accuracy``'s, conventions sec. 26 item 10)
PAIR_HEADINGS = {
    "metric": "Automatic measure", "human": "Human-judgment measure", "pairs": "System pairs",
    "accuracy": "Pairwise accuracy", "acc_eq": "acc-eq (ties count)", "epsilon": "ε (tie threshold)", "level": "Level",
    "bucket_low": "|Δ human| from", "bucket_high": "|Δ human| below", "compared": "Pairs people order",
    "concordant": "Ordered alike", "discordant": "Ordered oppositely", "ties_human": "Tied by people only",
    "ties_metric": "Tied by the measure only", "ties_both": "Tied by both", "spa": "Soft pairwise accuracy",
    "accuracy_low": "Pairwise accuracy, lower bound", "accuracy_high": "Pairwise accuracy, upper bound",
    "acc_eq_low": "acc-eq, lower bound", "acc_eq_high": "acc-eq, upper bound",
    "spa_low": "Soft pairwise accuracy, lower bound", "spa_high": "Soft pairwise accuracy, upper bound",
    "n_valid": "Bootstrap samples used", "documents": "Documents",
}

#: headings that read differently in one table (the same CSV column name, another meaning)
TABLE_HEADINGS: dict[str, dict[str, str]] = {
    "pairwise_wtl": {"wins": "Games A won", "ties": "Games tied", "losses": "Games B won"},
    "pairwise_consistency": {"n": "Sample size (games)", "ties": "Games tied"},
    "pair_accuracy": PAIR_HEADINGS,
    "close_pairs": PAIR_HEADINGS,
    "pairwise_judge_accuracy": {**PAIR_HEADINGS, "metric": "Judge", "human": "People", "documents": "Cases",
                                "items": "Items judged by both", "bt_accuracy": "Pairwise accuracy, Bradley-Terry",
                                "bt_acc_eq": "acc-eq, Bradley-Terry", "bt_epsilon": "ε, Bradley-Terry (Elo points)"},
}


#: column suffixes and how they read after the heading of what they qualify
_SUFFIXES = (
    ("_n_valid", "{}: valid samples"), ("_rank", "{} rank"), ("_p", "{} p-value"), ("_label", "{} strength"),
    ("_size", "{} strength (size only)"), ("_low", "{}, lower bound"), ("_high", "{}, upper bound"),
    ("_min", "{}, worst draw"), ("_max", "{}, best draw"), ("_samples", "{} per draw"),
)


def column_heading(column: str, table: str | None = None) -> str:
    """A table column in words: ``perseval_low`` -> ``PerSEval, lower bound``, ``pearson_p`` -> ``Pearson r
    p-value``, ``hj:rouge_l_rank`` -> ``HJ (ROUGE-L) rank``; an unknown name with its underscores as spaces.
    ``table`` picks a heading that differs in that table (``n`` of ``pairwise_consistency`` is a sample size)."""
    if table is not None and column in TABLE_HEADINGS.get(table, {}):
        return TABLE_HEADINGS[table][column]
    if column in HEADINGS:
        return HEADINGS[column]
    if column in METHOD_NAMES:
        return METHOD_NAMES[column]
    if _is_measure(column):
        return measure_name(column)
    for suffix, pattern in _SUFFIXES:
        base = column[: -len(suffix)]
        if not column.endswith(suffix) or not base:
            continue
        if base in METHOD_NAMES and suffix not in ("_low", "_high"):  # "Pearson p-value", not "Pearson r p-value"
            return pattern.format(base.capitalize())
        if base in HEADINGS or base in METHOD_NAMES or _is_measure(base):
            return pattern.format(column_heading(base))
    words = column.replace("_", " ").strip()
    return words[:1].upper() + words[1:]


#: each report table's title and what it shows (the page's table captions)
TABLES: dict[str, tuple[str, str]] = {
    "scores": ("Scores per system and measure",
               "PerSEval with its bootstrap interval over documents, EGISES, DEGRESS, accuracy distance and P-Acc; "
               "HJ rows score the human ratings. Rank, best and worst rank per measure: 1 + the systems whose "
               "interval lies wholly above, to the systems less those wholly below."),
    "table_perseval": ("Table 1 · PerSEval per system",
                       "One column per measure and its rank (1 = highest PerSEval)."),
    "table_egises": ("Table 7 · EGISES per system",
                     "One column per measure and its rank (1 = lowest EGISES: the least divergent, most responsive)."),
    "table_p_acc": ("Table 8 · P-Acc per system", "One column per measure and its rank (1 = highest P-Acc)."),
    "correlations": ("Table 2 · Correlation with human judgment",
                     "Every automatic PerSEval-X against every PerSEval-HJ-Y: Pearson, Spearman and Kendall τ-b with "
                     "two-sided p-values, strength labels (significance at p < 0.01) and bootstrap intervals."),
    "pair_accuracy": ("Table 2 · Pairwise accuracy, acc-eq and soft pairwise accuracy",
                      "Every automatic measure against every human-judgment measure over system pairs: pairwise "
                      "accuracy, acc_eq at its tie-calibrated ε, soft pairwise accuracy, with bootstrap intervals over "
                      "documents; a system row and a per-document (group-by-item) row each (conventions sec. 26)."),
    "close_pairs": ("Table 2 · Close pairs",
                    "The pairs in buckets of |difference in the human measure| (from bucket_low, below bucket_high; "
                    "empty: no bound): pairwise accuracy, acc_eq and the correlations over the bucket's pairs."),
    "permutation_tests": ("Permutation tests: does A correlate with human judgment better than B?",
                          "Δ = r(A, HJ) − r(B, HJ) on z-scored scores; the p-value counts permutations with a Δ at "
                          "least as large (SacreROUGE's test)."),
    "beta_ablation": ("Figure 3 · β ablation",
                      "The HJ correlation of PerSEval at each EDP β, rescored from the same distances."),
    "borda_kendall": ("Table 5 · Borda-Kendall consensus against human judgment",
                      "Rankings combined by Borda count, correlated with the human-judgment ranking."),
    "rank_agreement": ("Table 3 · EGISES–PerSEval rank agreement",
                       "How far ranking the systems by EGISES and by PerSEval agree, per measure."),
    "stability": ("Tables 4/6 · Stability per system and level",
                  "PerSEval on shares of the data: the paper's definition (documents with replacement) and the "
                  "authors' code's (pair rows without replacement)."),
    "stability_summary": ("Tables 4/6 · Stability per measure",
                          "δ-bias and δ-variance (the largest over the systems) and ε-rank stability (1 = every "
                          "draw ranks the systems as all the data does)."),
    "raters": ("Rater quality",
               "Per rater: ratings, time on task, straight-lining, agreement with the other raters and "
               "Krippendorff's α without the rater."),
    "rater_agreement": ("Krippendorff's α (ordinal)",
                        "Over all rated pairs, pairs of two different texts (the one to quote) and pairs of a text "
                        "with itself; overall and per study."),
    "pairwise_ratings": ("Pairwise judgments · Elo and Bradley-Terry per criterion and system",
                         "Online Elo in file order, its bootstrap median and 2.5th-97.5th percentiles, Bradley-Terry "
                         "with the same percentiles, each system's games won, tied and lost, and its rank with the "
                         "best and worst rank its Bradley-Terry interval allows."),
    "pairwise_wtl": ("Pairwise judgments · win/tie/loss per criterion and system pair",
                     "Per pair of systems, the share of their games that A won, tied and B won (percent of the "
                     "pair's games, unrounded) and the counts."),
    "pairwise_win_fraction": ("Pairwise judgments · win fraction per criterion and ordered pair",
                              "The share of its games against the opponent that the system won, a tie counting "
                              "half: (wins + ties / 2) / games."),
    "pairwise_consistency": ("Pairwise judgments · consistency and sensitivity of adjacent systems",
                             "For each pair of systems next to each other in the criterion's Bradley-Terry ranking: "
                             "how often a sample of n games gives a significant verdict (sensitivity) and how often "
                             "two independent samples give the same significant winner (consistency)."),
    "edins": ("e-DINS per system",
              "DINS (deviation), PF (insensitivity) and e-DINS = DINS + PF (gamma = 1); lower is better. With "
              "ratings, the _hj columns: e-DINS-HJ, the rated pairs' distances in place of the summaries' JSDs."),
    "edins_gamma": ("e-DINS against gamma", "e-DINS = DINS + gamma x PF at gamma = 0, 0.1, ..., 1, per system."),
    "pairwise_judge_accuracy": ("Pairwise judgments · each judge's leaderboard against the people's",
                                "Per judge and criterion, over the items both judged: pairwise accuracy, acc_eq "
                                "(tie-calibrated) and soft pairwise accuracy of the systems' mean game scores, with "
                                "bootstrap intervals over cases, and the Bradley-Terry leaderboards' accuracy and "
                                "acc_eq (conventions sec. 26)."),
    "pairwise_judges_agreement": ("Pairwise judgments · each judge against the people, item by item",
                                  "Per judge and criterion: accuracy and Cohen's kappa of the judge's verdicts against "
                                  "the people's, the people's own agreement (the ceiling), position and "
                                  "self-consistency, position and length bias beside the people's (sec. 28)."),
    "pairwise_judges_matrix": ("Pairwise judgments · agreement matrix",
                               "Per criterion and pair of sources (the people, each judge): the share of the items "
                               "both judged on which their verdicts agree."),
    "pairwise_judges_ppi": ("Pairwise judgments · people-only, PPI and PPI++ system scores",
                            "Per judge, criterion and system: the mean game score from the people alone, and the "
                            "prediction-powered estimates that add the judge's games (sec. 28)."),
    "pairwise_judges_alt_test": ("Pairwise judgments · may the judge replace the people?",
                                 "The alternative annotator test per judge and criterion: winning rate omega and "
                                 "the verdict (sec. 28)."),
    "pairwise_judges_style": ("Pairwise judgments · style-controlled leaderboards",
                              "Per source (the people, each judge): Bradley-Terry without and with the length "
                              "covariate, with both ranks (sec. 29)."),
    "probe_grid": ("Prompt probes · EGISES per model and prompt style",
                   "iCOPERNICUS: each MODEL:STYLE system's EGISES (lower is more personalised)."),
    "probe_rows": ("Prompt probes · each model's probes",
                   "A < B: style B should personalise more; paradox when EGISES(B) >= EGISES(A); delta_pp = "
                   "(EGISES(A) - EGISES(B)) x 100."),
    "probe_summary": ("Prompt probes · per probe",
                      "Models with both styles, the paradox models and their mean drop, the passing models and their "
                      "mean boost (percentage points)."),
    "probe_adversarial": ("Prompt probes · adversarial worsening per model",
                          "Each contrastive style against its adversarial variant (a wrong partner in the prompt): "
                          "worsening_pp = (EGISES(adversarial) - EGISES(style)) x 100, worsened when positive; "
                          "gap_pp / gap_adversarial_pp = the probe's EGISES(B) - EGISES(A) before / after."),
    "probe_adversarial_summary": ("Prompt probes · adversarial worsening per probe",
                                  "Per contrastive style: models, those that worsened, mean worsening in "
                                  "percentage points and relative to EGISES(style) in %."),
    "probe_hj_agreement": ("Prompt probes · human judgment agreement",
                           "Each model's and probe's paradox flag from EGISES-HJ beside the automatic one."),
}


def caption(table: str) -> tuple[str, str]:
    """A report table's (title, what it shows); an unknown table's name in words and no description."""
    return TABLES.get(table, (column_heading(table), ""))
