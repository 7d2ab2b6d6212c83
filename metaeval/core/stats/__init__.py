"""Meta-evaluation statistics: how well an automatic measure agrees with people (no Django; plain data in and out).

``meta_accuracy``: pairwise accuracy, acc_eq with tie calibration, close-pair buckets and bootstrap intervals over
documents; ``soft_pairwise``: paired permutation tests over documents and soft pairwise accuracy
(docs/conventions.md sec. 26).
"""
