"""The EGISES-JSD grid of the iCOPERNICUS paper (Patel et al., EMNLP 2024), Table 3, typed as printed: one model per
line, then its six values in the paper's column order (0-shot, 2-shot w/o hist., 2-shot w/ hist., C-0-shot,
C-2-shot w/o hist., C-2-shot w/ hist.). The numbers keep the printed digits ("0.46", "0.360")."""
from __future__ import annotations

from pathlib import Path

from metaeval.core.icopernicus.probes import STYLES

TABLE3 = """\
Llama 2 7B|0.408|0.367|0.367|0.408|0.46|0.458
Llama 2 13B|0.412|0.371|0.357|0.418|0.5|0.474
Mistral 7B v0.1|0.398|0.353|0.354|0.464|0.406|0.469
Mistral 7B Instruct v0.1|0.4|0.366|0.378|0.395|0.405|0.399
Mistral 7B Instruct v0.2|0.391|0.348|0.354|0.359|0.339|0.369
Tulu V2 7B|0.364|0.376|0.356|0.36|0.38|0.37
Tulu V2 13B|0.376|0.389|0.385|0.387|0.405|0.392
Orca 2 7B|0.44|0.436|0.433|0.359|0.351|0.347
Orca 2 13B|0.445|0.442|0.447|0.347|0.366|0.356
Stable Beluga 7B|0.371|0.395|0.407|0.377|0.398|0.396
Stable Beluga 13B|0.388|0.394|0.404|0.4|0.405|0.412
Llama 2 7B Chat|0.383|0.391|0.362|0.333|0.349|0.338
Llama 2 13B Chat|0.36|0.393|0.383|0.341|0.365|0.357
Tulu V2 DPO 7B|0.325|0.345|0.356|0.338|0.355|0.348
Tulu V2 DPO 13B|0.359|0.345|0.385|0.37|0.383|0.368
Zephyr 7B α|0.360|0.351|0.357|0.343|0.352|0.353
Zephyr 7B β|0.384|0.359|0.369|0.35|0.356|0.345
"""


def grid() -> list[tuple[str, str, str]]:
    """``(model, style, value as printed)`` for every cell, models in the table's order."""
    cells = []
    for line in TABLE3.splitlines():
        model, *values = line.split("|")
        assert len(values) == len(STYLES), line
        cells.extend((model, style, value) for style, value in zip(STYLES, values, strict=True))
    return cells


def write_scores(path: Path) -> Path:
    """The grid as a ``probes`` scores file (``model,style,egises``)."""
    lines = ["model,style,egises"] + [f"{model},{style},{value}" for model, style, value in grid()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
