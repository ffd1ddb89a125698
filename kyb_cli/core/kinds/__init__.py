"""The record kinds: knowledge, incidents, tasks, their lifecycle, deadlines and listings."""
