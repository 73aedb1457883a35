"""The shift handover (docs/design.md §6): handover notes, the predecessor's profile, the rotation brief and
its acknowledgement. Modules load on use; nothing here runs at import time."""

DEFAULT_BRIEF_TOKEN_BUDGET = 4000
"""A rotation brief's budget when the caller gives none, in tokens (``brief``, MCP ``scope=handover``)."""
