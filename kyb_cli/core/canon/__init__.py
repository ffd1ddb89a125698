"""The canon: the Git repository of record files, its one git runner, and one commit per write."""
