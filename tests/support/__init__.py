"""Helpers the tests build with: tiny models, store generators."""
