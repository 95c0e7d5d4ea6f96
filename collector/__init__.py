"""idemwatch collector."""
