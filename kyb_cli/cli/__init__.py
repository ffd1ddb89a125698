"""The `kyb` command line: a thin Click layer over `kyb_cli.core`."""
