"""Tools over a store: check (linter), context digest, agent files, export, doctor."""
