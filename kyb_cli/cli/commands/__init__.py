"""One module per `kyb` subcommand, imported lazily by `kyb_cli.cli.app.LazyGroup`."""
