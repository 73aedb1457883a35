"""Task trackers behind the :class:`~mission_memory.ingest.trackers.base.Tracker` protocol."""
