"""Derived, rebuildable indexes over the store: postings, BM25 terms, vectors and field columns per scope."""
