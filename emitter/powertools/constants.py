"""Powertools for AWS Lambda names the integration relies on (read from its source, aws-lambda-powertools 3.x)."""

from __future__ import annotations

STATUS_INPROGRESS = "INPROGRESS"
"""``persistence.datarecord.STATUS_CONSTANTS["INPROGRESS"]``: the stored status of a claimed key."""
STATUS_COMPLETED = "COMPLETED"
STATUS_EXPIRED = "EXPIRED"
"""``DataRecord.status`` reads EXPIRED once ``expiry_timestamp`` (epoch SECONDS) has passed."""

STREAM_EVENT_TYPES = frozenset({"KinesisDataStreams", "DynamoDBStreams"})
"""``batch.EventType`` names of stream sources: Lambda checkpoints at the lowest failed sequence number and retries
every record from there (https://docs.aws.amazon.com/lambda/latest/dg/services-kinesis-batchfailurereporting.html),
so the integration stops processing a stream batch at its first failure."""

DYNAMODB_PUT_ITEM_EVENTS = ("before-parameter-build.dynamodb.PutItem", "after-call.dynamodb.PutItem")
"""botocore event names used to ask DynamoDB for the overwritten item (``ReturnValues=ALL_OLD``) on the claim."""

SKIPPED = "skipped"
"""First member of the result tuple for stream records not processed after the checkpoint (Powertools uses
"success" / "fail")."""
