"""The starter project ``qlab init --from-openapi`` writes for your own API: qlab.yaml and its case files.

- :mod:`~qlab.project.starter.model`: what a starter is made of (the spec's facts, the measured figures);
- :mod:`~qlab.project.starter.queries`: one search query per operation that tells sibling operations apart;
- :mod:`~qlab.project.starter.auth`: an auth profile per security scheme, each reading a named env variable;
- :mod:`~qlab.project.starter.cases`: the search and read-only execute case files;
- :mod:`~qlab.project.starter.config`: qlab.yaml, with thresholds at the measured figures, rounded down.

Everything here is text generation from plain data: reading the spec is the collection layer's
(``qlab.collection.pin``), measuring is the run layer's (``qlab.run.baseline``).
"""
