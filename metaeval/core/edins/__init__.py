"""e-DINS (``measure``) and its report section (``report``)."""
