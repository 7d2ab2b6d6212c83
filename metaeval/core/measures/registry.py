"""Distance measures by name. Each factory imports its module lazily, so heavy dependencies load on use."""
from __future__ import annotations

from collections.abc import Callable

from metaeval.core.measures.base import Measure


def _rouge_l(compat: bool) -> Measure:
    from metaeval.core.measures.lexical import RougeL

    return RougeL(compat=compat)


def _rouge_su4(compat: bool) -> Measure:
    from metaeval.core.measures.lexical import RougeSU4

    return RougeSU4(compat=compat)


def _bleu1(compat: bool) -> Measure:
    from metaeval.core.measures.lexical import Bleu

    return Bleu(n=1, compat=compat)


def _bleu4(compat: bool) -> Measure:
    from metaeval.core.measures.lexical import Bleu

    return Bleu(n=4, compat=compat)


def _jsd(compat: bool) -> Measure:
    from metaeval.core.measures.divergence import JSD

    return JSD(compat=compat)


def _meteor(compat: bool) -> Measure:
    from metaeval.core.measures.meteor import Meteor

    return Meteor(compat=compat)


MEASURES: dict[str, Callable[[bool], Measure]] = {
    "rouge_l": _rouge_l,
    "rouge_su4": _rouge_su4,
    "bleu1": _bleu1,
    "bleu4": _bleu4,
    "jsd": _jsd,
    "meteor": _meteor,
}
#: the measures the authors' compat mode defines (PERSEVAL_CONVENTIONS.md sec. 3)
LEXICAL = ("rouge_l", "rouge_su4", "bleu4", "jsd")


def measure_names() -> list[str]:
    return list(MEASURES)


def get_measure(name: str, *, compat: bool = False) -> Measure:
    """The measure called ``name``; ``compat=True`` gives the authors' variant (``--compat authors``)."""
    try:
        factory = MEASURES[name]
    except KeyError:
        raise ValueError(f"unknown measure {name!r}; choose from {', '.join(MEASURES)}") from None
    return factory(compat)


def parse_measures(text: str) -> list[str]:
    """``"rouge_l,jsd"`` -> names, each checked."""
    names = [part.strip() for part in text.split(",") if part.strip()]
    if not names:
        raise ValueError("no measure given")
    for name in names:
        if name not in MEASURES:
            raise ValueError(f"unknown measure {name!r}; choose from {', '.join(MEASURES)}")
    return list(dict.fromkeys(names))
