"""The shift handover (docs/design.md §6): handover notes, the predecessor's profile, the rotation brief and
its acknowledgement. Modules load on use; nothing here runs at import time."""
