"""Powertools for AWS Lambda names the integration relies on (read from its source, aws-lambda-powertools 3.x)."""

from __future__ import annotations

STATUS_INPROGRESS = "INPROGRESS"
"""``persistence.datarecord.STATUS_CONSTANTS``: the stored status of a claimed key (``DataRecord._status``)."""
STATUS_COMPLETED = "COMPLETED"
STATUS_EXPIRED = "EXPIRED"
"""``DataRecord.status`` reads EXPIRED once ``expiry_timestamp`` (epoch SECONDS) has passed."""

WRAPPED_METHODS = ("get_record", "_put_record", "_update_record", "_delete_record")
"""The persistence layer methods ``instrument()`` wraps (on the instance, delegating at call time); plus
``_get_record`` in ``detect_takeover="observe"`` mode. Their signatures are checked against Powertools' own in
``tests/unit/emitter/test_powertools_private_api.py``. ``save_inprogress`` is not wrapped: it warns with
``stacklevel=2`` (no Lambda context registered), and a wrapper would move the place that warning names."""

DYNAMODB_PUT_ITEM_EVENTS = ("provide-client-params.dynamodb.PutItem", "after-call.dynamodb.PutItem")
"""botocore events used to ask DynamoDB for the overwritten item (``ReturnValues=ALL_OLD``) on the layer's own claim.
``provide-client-params`` runs before every ``before-parameter-build`` handler and before botocore validates the
parameters, so a ``Stubber`` and parameter validation see the request that is sent."""
