"""PerSEval (TMLR): EGISES, DEGRESS, EDP, PerSEval and P-Acc (``measure``), the human variants (``human``), the scoring
pipeline (``pipeline``), the paper's studies (``studies``) and the researcher report (``report``)."""
