"""iCOPERNICUS: the prompt builder (``prompts``), the prompt-style probes and adversarial worsening (``probes``) and
their report section (``report``)."""
