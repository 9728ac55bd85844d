"""Governance: what reads finished runs and records human decisions — promotion (baseline → candidate),
a skill's release gates, and the learning loop (suggestions, shadow rank, EvalCase proposals), plus the
records files they share.

May import the run and everything below it; never the reports or the CLI.
"""
