"""``python -m metaeval prompts`` and :mod:`metaeval.core.icopernicus.prompts`: the six iCOPERNICUS styles with their
token
budgets, partners and examples, the target headline never in the prompt, the adversarial variant, histories from a
file or the PENS files, and clear errors."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from metaeval.core.icopernicus.probes import split_system
from metaeval.core.icopernicus.prompts import (
    BUDGETS,
    STYLES,
    PromptInputs,
    Skipped,
    build_prompts,
    derangement,
    whitespace_tokenizer,
)
from tests.metaeval.cli_run import run

READERS = ["r1", "r2", "r3"]


def words(prefix: str, n: int) -> str:
    return " ".join(f"{prefix}{i}" for i in range(n))


def inputs(docs: int = 4, body_words: int = 3000) -> PromptInputs:
    documents = {f"d{d}": (f"Original headline {d}", words(f"d{d}w", body_words)) for d in range(docs)}
    own = {f"d{d}": {r: f"OWN {r} on d{d}" for r in READERS} for d in range(docs)}
    histories = {r: [f"clicked {r} {i} " + words("h", 30) for i in range(100)] for r in READERS}
    return PromptInputs(documents=documents, own=own, histories=histories)


def test_every_style_keeps_its_budgets_and_never_shows_the_target():
    built = list(build_prompts(inputs(), STYLES, seed=1))
    assert len(built) == 4 * 3 * 6
    tokenizer = whitespace_tokenizer()
    for prompt in built:
        budget = BUDGETS[prompt.style]
        assert f"OWN {prompt.reader_id} on {prompt.doc_id}" not in prompt.prompt  # the expected headline
        assert f"Original headline {prompt.doc_id[1:]}" not in prompt.prompt
        assert prompt.tokens["article"] == budget.article  # bodies are longer than every budget
        histories = [v for k, v in prompt.tokens.items() if k.startswith("history")]
        examples = [v for k, v in prompt.tokens.items() if k.startswith("example")]
        assert len(histories) == (0 if not budget.history else 2 if prompt.style.startswith("c-") else 1)
        assert all(budget.history - 31 < used <= budget.history for used in histories)  # whole 31-word headlines
        assert examples == ([budget.example] * 2 if budget.example else [])
        assert prompt.tokens["total"] == tokenizer.count(prompt.prompt)
        assert (prompt.partner_id != "") == prompt.style.startswith("c-")
        assert prompt.partner_id != prompt.reader_id and prompt.doc_id not in prompt.example_doc_ids
        if prompt.style.startswith("c-2"):  # both readers' headlines of each example
            for example in prompt.example_doc_ids:
                assert f"OWN {prompt.reader_id} on {example}" in prompt.prompt
                assert f"OWN {prompt.partner_id} on {example}" in prompt.prompt
    # the most recent clicks come first
    zero = next(p for p in built if p.style == "0-shot" and p.reader_id == "r1")
    assert zero.prompt.index("clicked r1 99 ") < zero.prompt.index("clicked r1 98 ")
    # seeded: the same seed gives the same prompts, another seed other partners or examples
    again = list(build_prompts(inputs(), STYLES, seed=1))
    assert [p.prompt for p in again] == [p.prompt for p in built]
    other = list(build_prompts(inputs(), STYLES, seed=2))
    assert [p.prompt for p in other] != [p.prompt for p in built]


def test_adversarial_prompts_replace_the_partners_history_and_headlines():
    data = inputs()
    honest = {p.prompt_id: p for p in build_prompts(data, ["c-2-shot-w-hist"], seed=3)}
    tampered = list(build_prompts(data, STYLES, seed=3, adversarial=True))
    assert {p.style for p in tampered} == {"c-0-shot", "c-2-shot-wo-hist", "c-2-shot-w-hist"}
    swap = derangement(READERS, "3|derangement")
    assert all(swap[r] != r for r in READERS) and sorted(swap.values()) == READERS
    for prompt in (p for p in tampered if p.style == "c-2-shot-w-hist"):
        assert prompt.adversarial and prompt.prompt_id.endswith("|adversarial")
        assert prompt.variant == f"{prompt.style}-adversarial" and split_system(f"m:{prompt.variant}")
        partner, original = prompt.partner_id, honest[prompt.prompt_id.removesuffix("|adversarial")]
        user2 = prompt.prompt.split("User 2 clicked")[1].split("\n\n")[0]
        assert f"clicked {swap[partner]} " in user2 and f"clicked {partner} " not in user2
        for example in prompt.example_doc_ids:
            assert f"OWN {partner} on {example}" not in prompt.prompt  # a random headline instead
            assert f"OWN {prompt.reader_id} on {example}" in prompt.prompt
        assert original.example_doc_ids == prompt.example_doc_ids


def test_skips_are_counted_not_invented():
    data = inputs(docs=2)  # one other document: too few examples
    lonely = PromptInputs(documents={**data.documents, "solo": ("h", "body text")},
                          own={**data.own, "solo": {"r9": "mine"}}, histories=data.histories)
    skipped = Skipped()
    built = list(build_prompts(lonely, STYLES, seed=0, skipped=skipped))
    assert {p.style for p in built} == {"0-shot", "c-0-shot"}
    assert skipped.counts["2-shot-wo-hist: fewer than 2 example documents"] == 3 * 2 + 1  # r9 too
    assert skipped.counts["c-0-shot: the document has one reader"] == 1
    assert skipped.counts["0-shot: no reading history for the reader"] == 1  # r9 has none
    with pytest.raises(ValueError, match="unknown prompt style"):
        list(build_prompts(data, ["5-shot"], seed=0))


def dataset(tmp_path: Path) -> Path:
    data = inputs(docs=3, body_words=50)
    path = tmp_path / "data.jsonl"
    path.write_text("".join(json.dumps({
        "doc_id": doc_id, "doc_summ": headline, "doc_text": body,
        "m_summary_dict": {r: {"user": data.own[doc_id][r]} for r in READERS}}) + "\n"
        for doc_id, (headline, body) in data.documents.items()), encoding="utf-8")
    return path


def test_the_command_writes_prompts_and_a_sidecar(tmp_path):
    histories = tmp_path / "h.jsonl"
    histories.write_text("".join(json.dumps({"reader_id": r, "history": [f"click {r} {i}" for i in range(5)]}) + "\n"
                                 for r in READERS), encoding="utf-8")
    out = tmp_path / "prompts.jsonl"
    code, _, err = run("prompts", str(dataset(tmp_path)), "--histories", str(histories), "--seed", "4",
                       "--out", str(out))
    assert code == 0, err
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(records) == 3 * 3 * 6 and f"wrote {len(records)} prompts" in err
    assert set(records[0]) == {"prompt_id", "doc_id", "reader_id", "style", "variant", "partner_id", "adversarial",
                               "example_doc_ids", "tokens", "tokenizer", "prompt"}
    assert all(record["variant"] == record["style"] for record in records)
    assert {r["tokenizer"] for r in records} == {"whitespace"}
    meta = json.loads((tmp_path / "prompts.jsonl.meta.json").read_text(encoding="utf-8"))
    assert meta["seed"] == 4 and meta["budgets"]["c-2-shot-w-hist"] == {"history": 850, "example": 450,
                                                                         "article": 1100}
    assert sum(meta["written"].values()) == len(records)


def test_histories_from_the_pens_files(tmp_path):
    news = tmp_path / "news.tsv"
    news.write_text("News ID\tCategory\tTopic\tHeadline\tNews body\tTitle entity\tEntity content\n"
                    "N1\tnews\tt\tFirst clicked\tbody one\t\t\nN2\tnews\tt\tSecond clicked\tbody two\t\t\n",
                    encoding="utf-8")
    test = tmp_path / "test.tsv"
    test.write_text("userid\tclicknewsID\tposnewID\trewrite_titles\n"
                    + "".join(f"{r}\tN1 N2\td0\tmine\n" for r in READERS), encoding="utf-8")
    out = tmp_path / "p.jsonl"
    code, _, err = run("prompts", str(dataset(tmp_path)), "--pens-news", str(news), "--pens-test", str(test),
                       "--styles", "0-shot", "--out", str(out))
    assert code == 0, err
    first = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    assert first["prompt"].index("- Second clicked") < first["prompt"].index("- First clicked")
    test.write_text("userid\tclicknewsID\tposnewID\trewrite_titles\nr1\tN1 N7\td0\tmine\n", encoding="utf-8")
    code, _, err = run("prompts", str(dataset(tmp_path)), "--pens-news", str(news), "--pens-test", str(test),
                       "--out", str(out))
    assert code == 2 and 'test.tsv:2: field "clicknewsID": news id "N7" is not in news.tsv' in err


def test_bad_input_is_one_clear_line(tmp_path):
    histories = tmp_path / "h.jsonl"
    histories.write_text('{"reader_id": "r1", "history": "not a list"}\n', encoding="utf-8")
    code, _, err = run("prompts", str(dataset(tmp_path)), "--histories", str(histories))
    assert code == 2 and 'h.jsonl:1: field "history" must be an array of headline strings' in err
    code, _, err = run("prompts", str(dataset(tmp_path)), "--styles", "0-shot,9-shot")
    assert code == 2 and "--styles: unknown 9-shot" in err
    code, _, err = run("prompts", str(dataset(tmp_path)), "--tokenizer", str(tmp_path / "nowhere"))
    assert code == 2 and "not a folder; give a local tokenizer folder" in err
    code, _, err = run("prompts", str(dataset(tmp_path)), "--styles", "0-shot", "--out", str(tmp_path / "x.jsonl"))
    assert code == 1 and "no prompt could be built" in err  # no histories: every 0-shot prompt is skipped


def test_a_local_tokenizer_counts_the_budgets(tmp_path):
    from tests.metaeval.core.measures import tiny_models

    folder = tmp_path / "tok"
    folder.mkdir()
    tokenizer = tiny_models.tokenizer(folder, model_max_length=1024)
    out = tmp_path / "p.jsonl"
    code, _, err = run("prompts", str(dataset(tmp_path)), "--styles", "2-shot-wo-hist", "--tokenizer", str(folder),
                       "--out", str(out))
    assert code == 0, err
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert {r["tokenizer"] for r in records} == {str(folder)}
    for record in records:  # counted in the tokenizer's tokens, not in words
        assert record["tokens"]["total"] == len(tokenizer.tokenize(record["prompt"]))
