from qlab.cli import main

main()
