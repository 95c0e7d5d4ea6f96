"""idemwatch dashboard."""
