"""`python -m kyb_cli` runs the same command line as `kyb`."""

from kyb_cli.cli.fast import main

if __name__ == "__main__":
    main()
