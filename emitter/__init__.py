"""idemwatch emitter: idempotency and handler metrics as CloudWatch EMF plus structured JSON logs."""
