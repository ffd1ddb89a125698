"""Record shapes: the Record model, the key <-> path <-> kind authority, write rules, versions."""
