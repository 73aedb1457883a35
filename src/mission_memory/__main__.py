"""``python -m mission_memory`` runs the command line."""

from mission_memory.cli.app import main

main()
