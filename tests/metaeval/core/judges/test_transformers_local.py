"""The local transformers judge on a tiny random GPT-2 built here: plumbing, determinism, errors."""
from __future__ import annotations

from pathlib import Path

import pytest

from metaeval.core.judges.base import JudgeConfigError, JudgeError
from metaeval.core.judges.cases import JudgeCase
from metaeval.core.judges.plan import plan
from metaeval.core.judges.prompts import DEFAULT_TEMPLATES
from metaeval.core.judges.runner import run_judging
from tests.metaeval.core.measures import tiny_models

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def tiny_gpt2(folder: Path, seed: int = 0) -> Path:
    """A 2-layer GPT-2 with random weights over the tiny WordPiece vocabulary, saved with its tokenizer."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    tokenizer = tiny_models.tokenizer(folder, model_max_length=1024)
    torch.manual_seed(seed)
    config = GPT2Config(vocab_size=len(tiny_models.VOCAB), n_positions=1024, n_embd=32, n_layer=2, n_head=2,
                        bos_token_id=tokenizer.cls_token_id, eos_token_id=tokenizer.sep_token_id)
    GPT2LMHeadModel(config).save_pretrained(str(folder))
    return folder


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_gpt2(tmp_path_factory.mktemp("tiny_gpt2"))


MESSAGES = [{"role": "system", "content": "judge"}, {"role": "user", "content": "text a or text b?"}]
CASE = JudgeCase("c1", "x", "y", "the cat sat", "a dog ran", "news", ("one story",))


def test_greedy_is_deterministic_and_raw_text_is_kept(model_dir):
    from metaeval.core.judges.transformers_local import TransformersJudge

    judge = TransformersJudge(model_dir, max_new_tokens=4)
    assert judge.prompt(MESSAGES) == "system: judge\n\nuser: text a or text b?\n\nassistant:"
    first = judge.complete(MESSAGES)
    assert isinstance(first, str) and first.strip()
    assert judge.complete(MESSAGES) == first
    described = judge.describe()
    assert described["kind"] == "transformers" and described["max_new_tokens"] == 4
    assert described["chat_template"] is False and judge.name == model_dir.name
    records = run_judging(judge, plan([CASE], ["quality"], runs=2), templates=DEFAULT_TEMPLATES)
    assert [r.winner in ("model_a", "model_b", "invalid") for r in records] == [True, True]
    assert all(r.raw and not r.error for r in records)


def test_sampling_is_seeded(model_dir):
    from metaeval.core.judges.transformers_local import TransformersJudge

    def replies(seed: int) -> list[str]:
        judge = TransformersJudge(model_dir, max_new_tokens=6, temperature=1.0, seed=seed)
        return [judge.complete(MESSAGES) for _ in range(4)]

    assert replies(1) == replies(1)
    assert len(set(replies(1))) > 1  # the k-th call of one prompt draws anew
    assert replies(1) != replies(2)


def test_chat_template_is_used_when_present(model_dir, tmp_path):
    from metaeval.core.judges.transformers_local import TransformersJudge

    judge = TransformersJudge(model_dir)
    judge.tokenizer.chat_template = ("{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"
                                     "{% if add_generation_prompt %}<assistant>{% endif %}")
    assert judge.prompt(MESSAGES) == "<system>judge<user>text a or text b?<assistant>"
    assert judge.describe()["chat_template"] is True


def test_too_long_prompt_is_a_judge_error(model_dir):
    from metaeval.core.judges.transformers_local import TransformersJudge

    judge = TransformersJudge(model_dir)
    with pytest.raises(JudgeError, match="more than the model's 1024 positions"):
        judge.complete([{"role": "user", "content": "cat " * 1100}])


def test_missing_model_says_how_to_provide_one(tmp_path):
    from metaeval.core.judges.transformers_local import TransformersJudge

    with pytest.raises(JudgeConfigError, match="not a model folder.*config.json.*never downloaded"):
        TransformersJudge(tmp_path / "nowhere")
    (tmp_path / "config.json").write_text("{}", encoding="utf-8")
    with pytest.raises(JudgeConfigError, match="cannot load a causal language model"):
        TransformersJudge(tmp_path)
