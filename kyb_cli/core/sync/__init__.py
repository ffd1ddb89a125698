"""Sharing a store through a Git remote: the network (system git), the pure merge, the integration."""
