"""Where things are: user dirs, config.toml, and which store a command works on."""
