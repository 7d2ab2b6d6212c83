"""Distance measures by name. Each factory imports its module lazily, so heavy dependencies load on use."""
from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the measures' module (numpy) loads with the first measure made
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


def _bertscore(compat: bool, **options: object) -> Measure:
    from metaeval.core.measures.bertscore import BertScore

    return BertScore(compat=compat, **options)  # type: ignore[arg-type]


def _infolm(compat: bool, **options: object) -> Measure:
    from metaeval.core.measures.infolm import InfoLM

    return InfoLM(compat=compat, **options)  # type: ignore[arg-type]


MEASURES: dict[str, Callable[..., Measure]] = {
    "rouge_l": _rouge_l,
    "rouge_su4": _rouge_su4,
    "bleu1": _bleu1,
    "bleu4": _bleu4,
    "jsd": _jsd,
    "meteor": _meteor,
    "bertscore": _bertscore,
    "infolm": _infolm,
}
#: the measures the authors' compat mode defines (docs/conventions.md sec. 3)
LEXICAL = ("rouge_l", "rouge_su4", "bleu4", "jsd")
#: measures that run a neural model (torch); they take options (model, device, ...)
NEURAL = ("bertscore", "infolm")
#: what ``python -m metaeval report`` computes by default: the paper's variants that need no extra input
REPORT_DEFAULT = (*LEXICAL, "bertscore", "infolm")


def measure_option_names(name: str) -> list[str]:
    """The keyword options a measure accepts (empty for the lexical ones)."""
    if name not in NEURAL:
        return []
    from metaeval.core.measures.bertscore import BertScore
    from metaeval.core.measures.infolm import InfoLM

    cls = BertScore if name == "bertscore" else InfoLM
    return [p for p in inspect.signature(cls.__init__).parameters if p not in ("self", "compat")]


def get_measure(name: str, *, compat: bool = False, options: Mapping[str, object] | None = None) -> Measure:
    """The measure called ``name``; ``compat=True`` gives the authors' variant (``--compat authors``).

    ``options`` go to neural measures (model, device, dtype, ...); an option a measure does not take is an error.
    """
    try:
        factory = MEASURES[name]
    except KeyError:
        raise ValueError(f"unknown measure {name!r}; choose from {', '.join(MEASURES)}") from None
    options = dict(options or {})
    if options:
        allowed = measure_option_names(name)
        unknown = sorted(set(options) - set(allowed))
        if unknown:
            hint = f"it takes {', '.join(allowed)}" if allowed else "it takes no options"
            raise ValueError(f"measure {name!r} has no option {', '.join(unknown)} ({hint})")
    return factory(compat, **options)


def parse_measures(text: str) -> list[str]:
    """``"rouge_l,jsd"`` -> names, each checked."""
    names = [part.strip() for part in text.split(",") if part.strip()]
    if not names:
        raise ValueError("no measure given")
    for name in names:
        if name not in MEASURES:
            raise ValueError(f"unknown measure {name!r}; choose from {', '.join(MEASURES)}")
    return list(dict.fromkeys(names))
