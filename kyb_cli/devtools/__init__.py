"""Developer tools: generators for completions and man pages, not used at run time."""
