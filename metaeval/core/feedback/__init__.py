"""OpenAI's summarize-from-feedback: the axis-evals reader (``reader``), surrogate personalized summaries
(``surrogates``) and the OpenAI PerSEval-HJ variant (``hj``)."""
