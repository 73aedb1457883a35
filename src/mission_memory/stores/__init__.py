"""Storage backends behind small protocols (:mod:`mission_memory.stores.base`)."""
