"""Task trackers behind the :class:`~mission_memory.trackers.base.Tracker` protocol."""
