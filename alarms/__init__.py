"""idemwatch alarms."""
