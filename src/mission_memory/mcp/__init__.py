"""The MCP shell: one server, one tool (``workflow_memory_query``)."""
