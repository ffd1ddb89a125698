"""The `kyb` command line: a thin Click door over the porcelain, `kyb_cli.api`."""
