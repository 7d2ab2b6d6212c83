"""Dataset importers: pure parsers (consolidated, pens, summaries) -> validated records -> store.dataset_import."""
