"""What a researcher's run may ask of a worker through the neural measures' options (metaeval.run_policy; issue 28:
"review every other researcher-supplied setting that reaches a worker"). The probe found the judge endpoint; this
review found a second way out: BERTScore's ``baseline`` file, opened by the worker, whose first line came back in
the run's error message."""
from __future__ import annotations

import pytest

from metaeval.run_policy import allowed_models, measure_options_problems


@pytest.mark.parametrize(("options", "problem"), [
    ({"infolm": {"model": "/etc"}}, "infolm.model: '/etc' is not a model the operator allows"),
    ({"bertscore": {"model": "../../secrets"}}, "bertscore.model: '../../secrets' is not a model"),
    ({"infolm": {"device": "cuda; rm"}}, "infolm.device: auto, cpu, cuda, cuda:N or mps"),
    ({"infolm": {"batch_size": 10**9}}, "infolm.batch_size: a whole number from 1 to 1024"),
    ({"bertscore": {"batch_tokens": 0}}, "bertscore.batch_tokens: a whole number from 1 to 1048576"),
    ({"bertscore": {"max_length": True}}, "bertscore.max_length: a whole number from 1 to 4096"),
    ({"infolm": {"temperature": float("inf")}}, "infolm.temperature: a number from 1e-06 to 100"),
])
def test_options_naming_things_on_the_worker_or_unbounded_work_are_refused(options, problem):
    assert [p for p in measure_options_problems(options) if p.startswith(problem)], measure_options_problems(options)


def test_the_operators_models_and_baselines_are_allowed(settings, monkeypatch, tmp_path):
    settings.METAEVAL_ALLOWED_MODELS = f"{tmp_path}/bert-tiny, org/model"
    settings.METAEVAL_ALLOWED_BASELINES = str(tmp_path / "baseline.tsv")
    monkeypatch.setenv("METAEVAL_INFOLM_MODEL", "/models/infolm")
    assert {f"{tmp_path}/bert-tiny", "org/model", "/models/infolm", "sentence-transformers/all-MiniLM-L6-v2",
            "google/bert_uncased_L-2_H-128_A-2", "distilbert-base-uncased"} == allowed_models()
    assert measure_options_problems({
        "infolm": {"model": "org/model", "temperature": 0.25, "device": "cuda:1", "batch_size": 64},
        "bertscore": {"model": "/models/infolm", "baseline": str(tmp_path / "baseline.tsv"), "layer": -1},
    }) == []
