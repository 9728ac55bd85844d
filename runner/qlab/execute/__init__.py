"""The execute stage's machinery: plan step → HTTP request, the run's HTTP client (retries, concurrency), auth
readiness, mutation safety, response schema checks, runner events, and the dev-server lifecycle.

``qlab.stages.execute`` drives it; the assertion types live in ``qlab.execute.assertions`` and scrubbing in
``qlab.adapters.scrub``.
"""
