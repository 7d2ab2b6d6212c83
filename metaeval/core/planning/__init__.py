"""Study planning and adaptive collection (conventions sec. 27): power and sample size (``power``, ``hj_power``),
adaptive assignment of preference pairs (``adaptive``), anytime-valid confidence sequences and stopping rules
(``confseq``), ranks with their uncertainty (``ranks``) and the simulator that runs them together (``simulate``).
No Django; plain data in and out; every random step seeded."""
