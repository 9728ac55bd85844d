"""The contracts every layer shares: errors and exit codes, reason codes, case results and the result schema,
metric definitions, how a case changed between two runs, qlab's own data files (schemas), and plugin packages'
entry points. They import nothing of qlab's but each other (ARCHITECTURE.md)."""
