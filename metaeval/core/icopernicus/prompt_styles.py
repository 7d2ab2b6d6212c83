"""The iCOPERNICUS prompt styles' names (docs/conventions.md sec. 23-24), apart from the probes' numeric code so
that ``prompts`` and ``probes`` can name them in ``--help`` without loading numpy or scipy;
:mod:`metaeval.core.icopernicus.probes` and :mod:`metaeval.core.icopernicus.prompts` take them from here. No Django."""
from __future__ import annotations

__all__ = ["ADVERSARIAL_PROBES", "ADVERSARIAL_STYLES", "ADVERSARIAL_SUFFIX", "ALL_STYLES", "PROBE_MODES", "STYLES"]

#: the six prompt styles of the paper's Table 2/3, in its column order
STYLES: tuple[str, ...] = ("0-shot", "2-shot-wo-hist", "2-shot-w-hist", "c-0-shot", "c-2-shot-wo-hist",
                           "c-2-shot-w-hist")
#: the variant of a contrastive style whose prompts carried a wrong partner (``prompts --adversarial``; App. E.1)
ADVERSARIAL_SUFFIX = "-adversarial"
#: the contrastive styles and, for each, the probe of the paper's Table 6 whose B it is
ADVERSARIAL_PROBES: dict[str, str] = {"c-0-shot": "PX-3", "c-2-shot-wo-hist": "PX-4", "c-2-shot-w-hist": "PX-5"}
#: the adversarial styles, in :data:`STYLES` order
ADVERSARIAL_STYLES: tuple[str, ...] = tuple(style + ADVERSARIAL_SUFFIX for style in ADVERSARIAL_PROBES)
#: every style a system name or a score file may carry: the six, then their adversarial variants
ALL_STYLES: tuple[str, ...] = STYLES + ADVERSARIAL_STYLES
#: the probe pairs ``probes --probes`` offers: the paper's tables (reported) or its sec. 3 text (defined)
PROBE_MODES: tuple[str, ...] = ("reported", "defined")
