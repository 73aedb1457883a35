"""Pull retrieval: filters, hybrid search with RRF fusion, near-duplicate suppression, digest packing."""
