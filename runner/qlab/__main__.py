from qlab.cli import entry

entry()
