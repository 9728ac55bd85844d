"""Promotion: judge a baseline → candidate change under its qlab.yaml rule — which cases are comparable,
their change classes, the rule's metrics (noise-aware, paired bootstrap), the evidence checks, the report."""
