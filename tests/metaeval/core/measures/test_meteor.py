"""METEOR distance: exact parity with NLTK's meteor_score, compat rounding, edge cases, offline WordNet.

Needs WordNet: ``make wordnet`` (``make test`` runs it first).
"""
from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from metaeval.core.measures import nltkdata
from metaeval.core.measures.base import MeasureUnavailable
from metaeval.core.measures.meteor import Meteor, meteor
from tests.plain_machine import path_without

REPO = Path(__file__).resolve().parents[4]


def nltk_meteor(a: str, b: str) -> float:
    """The authors' call: reference a, hypothesis b."""
    nltkdata.require_wordnet()
    from nltk.translate.meteor_score import meteor_score

    return meteor_score([a.split()], b.split())


# Word groups with WordNet synonyms, inflections (stem matches) and unrelated words.
GROUPS = [
    ["dog", "dogs", "hound", "hounds", "Dog", "domestic"],
    ["run", "runs", "ran", "running", "Runner", "sprint"],
    ["fast", "quickly", "quick", "rapid", "speedy", "fasting"],
    ["car", "cars", "automobile", "auto", "machine", "motorcar"],
    ["big", "large", "great", "bigger", "larger", "huge"],
    ["buy", "bought", "purchase", "purchased", "buying", "corrupt"],
    ["the", "a", "an", "The", "of", "to"],
    ["house", "home", "houses", "housing", "family", "household"],
    ["happy", "glad", "felicitous", "happier", "well-chosen", "happiness"],
    ["election", "vote", "voting", "elections", "ballot", "poll"],
    ["government", "governments", "authorities", "regime", "governance", "state"],
    ["said", "say", "says", "stated", "told", "tell"],
]


def make_pairs(seed: int, n: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)

    def text() -> str:
        words = []
        for _ in range(rng.randint(1, 14)):
            w = rng.choice(rng.choice(GROUPS))
            if rng.random() < 0.1:
                w += rng.choice([",", ".", "!"])
            words.append(w)
        return " ".join(words)

    pairs = []
    for _ in range(n):
        a = text()
        r = rng.random()
        if r < 0.15:
            b = a  # identical
        elif r < 0.4:  # a shuffled or partly replaced copy
            toks = a.split()
            rng.shuffle(toks)
            b = " ".join(t if rng.random() < 0.6 else rng.choice(rng.choice(GROUPS)) for t in toks)
        else:
            b = text()
        pairs.append((a, b))
    return pairs


HAND_PAIRS = [
    ("the dog ran fast", "a hound runs quickly"),
    ("a hound runs quickly", "the dog ran fast"),
    ("It is a guide to action that ensures that the military will forever heed Party commands",
     "It is a guide to action which ensures that the military always obeys the commands of the party"),
    ("The government bought large cars", "the authorities purchased big automobiles"),
    ("the cat sat on the mat", "the cat sat on the mat"),
    ("cat", "cat"),
    ("Cat", "cat"),
    ("the cat", "the cat sat on the mat"),
    ("the cat sat on the mat", "the cat"),
    ("this is a cat", "non matching hypothesis"),
    ("  spaced   out\ttext\n", "spaced out text"),
    ("dog dog dog", "dog"),
    ("dog", "dog dog dog"),
    ("", ""),
    ("", "something here"),
    ("something here", ""),
    ("   ", "\n"),
]

PARITY_PAIRS = HAND_PAIRS + make_pairs(20240607, 40)


def test_parity_with_nltk_exact():
    assert len(PARITY_PAIRS) >= 50
    got = Meteor().distances(PARITY_PAIRS)
    want = np.array([1 - nltk_meteor(a, b) for a, b in PARITY_PAIRS])
    assert got.dtype == np.float64 and got.shape == (len(PARITY_PAIRS),)
    for (a, b), g, w in zip(PARITY_PAIRS, got.tolist(), want.tolist(), strict=True):
        assert g == w, (a, b, g, w)
    # the seeded pairs exercise every kind of match, not only zero scores
    assert sum(0 < w < 1 for w in want) > 30


def test_parity_compat_exact():
    got = Meteor(compat=True).distances(PARITY_PAIRS)
    want = [1 - round(nltk_meteor(a, b), 5) for a, b in PARITY_PAIRS]
    assert got.tolist() == want


def test_larger_seeded_batch_parity():
    pairs = make_pairs(7, 400)
    got = Meteor().distances(pairs).tolist()
    assert got == [1 - nltk_meteor(a, b) for a, b in pairs]


def test_synonyms_are_looked_up_on_porter_stems_as_in_nltk():
    # NLTK's alignment: exact, then Porter stems, then WordNet synonyms of the *stemmed* leftovers. Here only
    # hound~dog aligns: "quickly" became "quickli" (no synsets) and "ran" vs "runs"->"run" is no stem match.
    # One match of four words each: P = R = Fmean = 1/4, one chunk: penalty 0.5, score 0.125.
    assert Meteor()("the dog ran fast", "a hound runs quickly") == 1 - 0.125
    assert nltk_meteor("the dog ran fast", "a hound runs quickly") == 0.125
    # a stem match: "cats" ~ "cat"
    assert Meteor()("cats", "cat") == 0.5


def test_argument_order_reference_then_hypothesis():
    a, b = "the cat", "the cat sat on the mat"
    assert Meteor()(a, b) == 1 - nltk_meteor(a, b)
    assert Meteor()(b, a) == 1 - nltk_meteor(b, a)
    assert Meteor()(a, b) != Meteor()(b, a)  # METEOR weighs recall (reference side) 9:1


def test_empty_texts_follow_nltk():
    # NLTK returns 0.0 for an empty side (its ZeroDivisionError branch), so the distance is 1.0, even for two
    # empty texts; whitespace-only texts have no tokens either.
    pairs = [("", ""), ("", "a b"), ("a b", ""), ("  ", "\t")]
    assert Meteor().distances(pairs).tolist() == [1.0] * 4
    assert [nltk_meteor(a, b) for a, b in pairs] == [0.0] * 4
    assert Meteor(compat=True).distances(pairs).tolist() == [1.0] * 4


def test_identical_texts_keep_fragmentation_penalty():
    # one chunk of n matches: score = (1 - 0.5 * (1/n) ** 3) * 1
    assert Meteor()("cat", "cat") == 0.5
    d = Meteor()("the cat sat", "the cat sat")
    assert d == 1 - (1 - 0.5 * (1 / 3) ** 3)
    assert d == 1 - nltk_meteor("the cat sat", "the cat sat")
    assert Meteor()("Cat", "cAT") == 0.5  # NLTK lower-cases tokens


def test_compat_rounds_score_to_5dp():
    a, b = HAND_PAIRS[2]
    raw = nltk_meteor(a, b)
    assert round(raw, 5) != raw
    assert Meteor(compat=True)(a, b) == 1 - round(raw, 5)
    assert Meteor()(a, b) == 1 - raw
    assert Meteor(compat=True)(a, b) != Meteor()(a, b)


def test_batch_duplicates_and_order():
    pairs = [HAND_PAIRS[0], HAND_PAIRS[3], HAND_PAIRS[0], ("x", "y"), HAND_PAIRS[3]]
    got = Meteor().distances(pairs).tolist()
    assert got == [Meteor()(a, b) for a, b in pairs]
    assert got[0] == got[2] and got[1] == got[4]
    assert Meteor().distances([]).shape == (0,)


def test_meteor_function_on_lowercased_tokens():
    assert meteor(["the", "dog"], ["the", "hound"]) == nltk_meteor("the dog", "the hound")


def test_identity_and_cache_key():
    m, c = Meteor(), Meteor(True)
    assert m.name == c.name == "meteor"
    assert not m.compat and c.compat
    assert m.cache_key != c.cache_key
    assert c.label == "meteor (authors)"


def test_missing_wordnet_names_the_fix(tmp_path):
    empty = tmp_path / "nltk_data"
    empty.mkdir()
    with pytest.raises(MeasureUnavailable) as info:
        nltkdata.require_wordnet(search=[str(empty)])
    msg = str(info.value)
    assert "make wordnet" in msg
    assert "scripts/install_wordnet.sh" in msg
    assert "NLTK_DATA" in msg and "corpora/wordnet" in msg
    assert str(empty) in msg


def test_measure_raises_missing_wordnet(tmp_path, monkeypatch):
    monkeypatch.setattr(nltkdata, "default_search_path", lambda: [str(tmp_path)])
    with pytest.raises(MeasureUnavailable, match="make wordnet"):
        Meteor().distances([("a", "b")])


def test_without_wordnet_a_run_lists_meteor_as_unavailable_and_scores_the_rest(tmp_path, monkeypatch):
    """`report` (and `score --skip-unavailable`, the web runs) on a machine without WordNet: METEOR is listed with
    the fix and ROUGE-L is scored; it used to fail the whole run at METEOR's first distance. Without the flag
    `score` stops with the same message."""
    from tests.metaeval.cli_run import run

    monkeypatch.setattr(nltkdata, "default_search_path", lambda: [str(tmp_path)])
    demo = REPO / "fixtures" / "demo"
    code, out, err = run("report", str(demo / "consolidated.jsonl"), "--ratings", str(demo / "ratings.csv"),
                         "--measures", "rouge_l,meteor", "--aux", "rouge_l", "--out-dir", str(tmp_path / "out"))
    assert code == 0, err
    unavailable = out[out.index("Unavailable measures (not scored)"):]
    assert unavailable.splitlines()[1].startswith("  meteor: NLTK's WordNet corpus (corpora/wordnet) was not found")
    assert "make wordnet" in unavailable and "apt-get" in unavailable
    scored = (tmp_path / "out" / "scores.csv").read_text(encoding="utf-8")
    assert ",rouge_l," in scored and "meteor" not in scored
    code, out, err = run("score", str(demo / "consolidated.jsonl"), "--measures", "rouge_l,meteor",
                         "--out", str(tmp_path / "strict.csv"))
    assert code != 0 and "make wordnet" in err


def test_search_order_prefers_nltk_data_env(tmp_path, monkeypatch):
    monkeypatch.setenv("NLTK_DATA", os.pathsep.join([str(tmp_path / "x"), str(tmp_path / "y")]))
    path = nltkdata.default_search_path()
    assert path[:3] == [str(tmp_path / "x"), str(tmp_path / "y"), os.path.join(sys.prefix, "nltk_data")]


def test_import_is_light():
    code = (
        "import sys; import metaeval.core.measures.meteor, metaeval.core.measures.text, "
        "metaeval.core.measures.nltkdata; "
        "bad = [m for m in ('nltk', 'django') if m in sys.modules]; assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True)


# --- the offline WordNet install -------------------------------------------------------------------------------


def test_wordnet_loads_offline():
    wn = nltkdata.require_wordnet()
    assert wn.get_version() == "3.0"
    assert "dog.n.01" in [s.name() for s in wn.synsets("dog")]
    assert wn.synset("dog.n.01").lexname() == "noun.animal"
    assert wn.morphy("dogs") == "dog"
    assert wn.morphy("ran", wn.VERB) == "run"
    from nltk.stem import WordNetLemmatizer

    assert WordNetLemmatizer().lemmatize("churches") == "church"
    assert WordNetLemmatizer().lemmatize("geese") == "goose"
    assert wn.lemma_from_key("dog%1:05:00::").name() == "dog"  # index.sense
    assert wn.synset("dog.n.01").lemmas()[0].count() > 0  # cntlist.rev


def test_generated_lexnames_agree_with_the_data_files():
    root = Path(nltkdata.find_wordnet_dir()) / "corpora" / "wordnet"
    lines = (root / "lexnames").read_text().splitlines()
    assert len(lines) == 45
    table = [line.split("\t") for line in lines]
    assert all(int(num) == i for i, (num, _, _) in enumerate(table))
    category = {"n": "1", "v": "2", "a": "3", "s": "3", "r": "4"}
    seen = set()
    for pos in ("noun", "verb", "adj", "adv"):
        with open(root / f"data.{pos}", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("  "):  # licence header
                    continue
                _, lex_num, ss_type = line.split(" ", 3)[:3]
                num, name, cat = table[int(lex_num)]
                assert cat == category[ss_type], line[:40]
                assert name.split(".")[0] == {"1": "noun", "2": "verb", "3": "adj", "4": "adv"}[cat]
                seen.add(int(lex_num))
    assert seen == set(range(45))


@pytest.mark.skipif(not Path("/usr/share/wordnet/data.noun").exists(), reason="Debian WordNet files not present")
def test_install_script_copies_and_is_idempotent(tmp_path):
    target = tmp_path / "data"
    script = REPO / "scripts" / "install_wordnet.sh"
    first = subprocess.run(["bash", str(script), str(target)], capture_output=True, text=True, check=True)
    assert "WordNet 3.0 in" in first.stdout
    wn_dir = target / "corpora" / "wordnet"
    for name in ("lexnames", "data.noun", "index.sense", "cntlist.rev", "noun.exc", ".metaeval-installed"):
        path = wn_dir / name
        assert path.is_file() and not path.is_symlink(), name
    assert (wn_dir / "data.noun").stat().st_size == Path("/usr/share/wordnet/data.noun").stat().st_size
    again = subprocess.run(["bash", str(script), str(target)], capture_output=True, text=True, check=True)
    assert again.stdout == "" and again.stderr == ""
    assert nltkdata.find_wordnet_dir([str(tmp_path / "nope"), str(target)]) == str(target)


def test_install_script_without_apt_get_is_an_error_unless_optional(tmp_path):
    """`make wordnet` (the tests) stops when WordNet cannot be had; `--optional` (make run, demo, serve, worker)
    says what METEOR needs and goes on."""
    script = REPO / "scripts" / "install_wordnet.sh"
    env = {**os.environ, "PATH": path_without(tmp_path / "bin"), "WORDNET_SRC": str(tmp_path / "none")}
    target = tmp_path / "data"
    strict = subprocess.run(["bash", str(script), str(target)], capture_output=True, text=True, env=env)
    assert strict.returncode == 1
    assert "apt-get is not on PATH" in strict.stderr and "wordnet-base" in strict.stderr
    optional = subprocess.run(["bash", str(script), "--optional", str(target)], capture_output=True, text=True,
                              env=env)
    assert optional.returncode == 0
    assert optional.stderr.splitlines()[0] == (
        f"install_wordnet: apt-get is not on PATH, and {tmp_path / 'none'} lacks WordNet; going on without WordNet.")
    assert "METEOR (and --preprocess authors) will be listed as unavailable" in optional.stderr
    assert "`make wordnet`" in optional.stderr and "NLTK_DATA" in optional.stderr
    assert not (target / "corpora" / "wordnet").exists()
