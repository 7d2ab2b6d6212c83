"""Meta-evaluation of personalization measures (PerSEval, EGISES, DEGRESS, P-Acc).

``metaeval.core`` is the numeric core and never imports Django; the Django glue lives beside it.
"""
