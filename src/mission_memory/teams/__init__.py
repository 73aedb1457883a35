"""Teams: who may read what (``access_control``, docs/adr/0045) and the operator tokens that say who is
asking (``operator_tokens``, docs/adr/0046)."""
