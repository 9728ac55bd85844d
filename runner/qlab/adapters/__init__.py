"""The adapters every layer shares, each in front of one library or one concern: the HTTP client policy
(httpx), JSON read strictly, JSONPath (jsonpath-ng), fuzzy matching (rapidfuzz), atomic writes, a bounded
memo, and the one scrubber in front of every writer. They import only the contracts (ARCHITECTURE.md)."""
