"""The sidecar SQLite index: a cache of every version in the canon, brought up to HEAD before each read."""
