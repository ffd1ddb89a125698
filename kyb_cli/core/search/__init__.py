"""Search over the index: the four time modes, lexical (FTS5), vectors, fusion, the query pipeline."""
