"""Reading and writing: dataset and rating loaders, file formats with file:line problems, the corpus, run records."""
