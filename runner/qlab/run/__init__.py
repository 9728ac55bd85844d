"""The run: ``qlab run`` as a library — pre-run checks, the gates in order, in-run boundary guards, selection,
shards and their merge, the result artifact, the scorecard and the outputs written for one run.

May import the layers below it (contracts, adapters, project, collection, engine, execute, stages) and the
reports' renderers (``outputs`` writes JUnit and the summary); never governance or the CLI. ``api``
(``run_project``) is the exception, a layer of its own above governance (ARCHITECTURE.md).
"""
