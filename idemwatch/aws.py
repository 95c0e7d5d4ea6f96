"""The one boto3 session builder of idemwatch, and AWS failures as one-line errors.

``collect cloudwatch``, ``audit live``, ``alarms deploy`` and the dashboard's CloudWatch source all build their
sessions and clients with :class:`AwsTarget`, so the rules below hold for each of them:

- **Region**: ``--region``, else ``$AWS_REGION``, else botocore's own chain (``AWS_DEFAULT_REGION``, the profile's
  ``region``). botocore does not read ``AWS_REGION`` (``botocore.configprovider``), which Lambda and the other AWS
  SDKs set; without any of them, :class:`AwsConfigError` names all three.
- **Credentials**: the standard boto3 chain, or the named ``--profile``; with ``--role-arn``, STS AssumeRole first
  (called at ``--endpoint-url`` too when one is given) and every client uses the role's credentials.
- **Endpoint**: one URL for every service (LocalStack, moto, a test server on 127.0.0.1).
- **Errors**: :func:`translate` turns an SDK exception into an :class:`AwsError` subclass whose message is one line
  naming the IAM action and the resource (missing credentials, access denied, throttled, not found, rejected,
  unreachable endpoint, malformed response).
- **Malformed responses**: botocore reads a 2xx JSON-protocol answer whose body is not JSON as
  ``{"message": <body>}``, an empty result (a prefix "matches no log group", a table has no ``Table``). Every
  session built here refuses such an answer with :class:`MalformedResponseError` instead.

boto3 is an optional dependency (the collector and alarms extras): it is imported when a session is built, so the
error classes can be imported without it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ACCESS_DENIED_CODES",
    "THROTTLING_CODES",
    "AccessDeniedError",
    "AwsConfigError",
    "AwsError",
    "AwsTarget",
    "MalformedResponseError",
    "MissingCredentialsError",
    "NotFoundError",
    "RejectedError",
    "ThrottledError",
    "error_code",
    "is_throttling",
    "resolve_region",
    "translate",
]

THROTTLING_CODES = frozenset({
    "LimitExceededException", "ThrottlingException", "Throttling", "TooManyRequestsException",
    "RequestLimitExceeded", "ProvisionedThroughputExceededException", "RequestThrottled",
    "ServiceUnavailableException",
})
"""Error codes retried with jittered backoff. StartQuery raises LimitExceededException when the account's concurrent
Logs Insights query quota is full; the other codes are the AWS SDKs' standard throttling/transient codes."""

ACCESS_DENIED_CODES = frozenset({
    "AccessDeniedException", "AccessDenied", "UnauthorizedOperation", "UnrecognizedClientException",
    "InvalidClientTokenId", "ExpiredTokenException", "ExpiredToken", "SignatureDoesNotMatch",
})
"""Error codes meaning the caller's credentials are refused or lack a permission."""

_NOT_FOUND_CODES = frozenset({"ResourceNotFoundException", "ResourceNotFound"})
_REJECTED_CODES = frozenset({"MalformedQueryException", "InvalidParameterException", "ValidationException"})
_JSON_PROTOCOLS = frozenset({"json", "rest-json"})


class AwsError(Exception):
    """Base class: an AWS call or the AWS configuration failed; ``str(exc)`` is one line fit for the CLI."""


class AwsConfigError(AwsError):
    """No Region is configured, or the named profile does not exist."""


class MissingCredentialsError(AwsError):
    """No AWS credentials were found (environment, profile, SSO, instance or task role)."""


class AccessDeniedError(AwsError):
    """The caller lacks an IAM permission, or its credentials are refused; the message names the action."""


class ThrottledError(AwsError):
    """The account kept throttling (LimitExceededException, ThrottlingException, ...) after every retry."""


class NotFoundError(AwsError):
    """The named resource (log group, DynamoDB table, ...) does not exist in this account and Region."""


class RejectedError(AwsError):
    """The service rejected the request (MalformedQueryException, InvalidParameterException, ValidationException)."""


class MalformedResponseError(AwsError):
    """The endpoint answered with a body that is not what the service's protocol promises (e.g. not JSON)."""


def resolve_region(region: str | None, environ: Mapping[str, str] | None = None) -> str | None:
    """``region`` (``--region``), else ``$AWS_REGION``; None lets botocore's chain decide (``AWS_DEFAULT_REGION``,
    the profile's ``region``)."""
    env = os.environ if environ is None else environ
    return region or env.get("AWS_REGION") or None


@dataclass(frozen=True)
class AwsTarget:
    """Where and as whom to call AWS: ``profile`` (None: the standard chain), ``region`` (None: see
    :func:`resolve_region`), ``endpoint_url`` for every service, ``role_arn`` to assume first (cross-account) with
    ``role_session_name``."""

    profile: str | None = None
    region: str | None = None
    endpoint_url: str | None = None
    role_arn: str | None = None
    role_session_name: str = "idemwatch"

    def session(self) -> Any:
        """A ``boto3.session.Session`` in this target's Region, with the role's credentials when ``role_arn`` is
        set. Raises :class:`AwsConfigError` (unknown profile, no Region) and the :func:`translate` errors of
        ``sts:AssumeRole``, prefixed ``cannot assume <role> (--role-arn):``."""
        import boto3
        import botocore.exceptions

        try:
            base = boto3.session.Session(profile_name=self.profile, region_name=resolve_region(self.region))
        except botocore.exceptions.ProfileNotFound:
            raise AwsConfigError(f"AWS profile not found: {self.profile} (--profile)") from None
        if not base.region_name:
            raise AwsConfigError("no AWS region: pass --region, or set AWS_DEFAULT_REGION (read by botocore) or "
                                 "AWS_REGION (read by idemwatch; botocore ignores it), or set region in the AWS profile")
        if not self.role_arn:
            return _refusing_malformed(base)
        sts = _refusing_malformed(base).client("sts", endpoint_url=self.endpoint_url)
        try:
            creds = sts.assume_role(RoleArn=self.role_arn, RoleSessionName=self.role_session_name)["Credentials"]
        except Exception as exc:
            err = translate(exc, action="sts:AssumeRole", resource=self.role_arn)
            raise type(err)(f"cannot assume {self.role_arn} (--role-arn): {err}") from exc
        return _refusing_malformed(boto3.session.Session(
            aws_access_key_id=creds["AccessKeyId"], aws_secret_access_key=creds["SecretAccessKey"],
            aws_session_token=creds["SessionToken"], region_name=base.region_name))

    def client(self, service: str, session: Any = None, retries: int = 3) -> Any:
        """A client for ``service`` at this target's endpoint (``session`` default: a new :meth:`session`).
        ``retries`` = total attempts botocore makes itself (1 = none: the Logs Insights runner owns its throttling
        policy)."""
        from botocore.config import Config

        session = session or self.session()
        cfg = Config(retries={"total_max_attempts": retries, "mode": "standard"}, max_pool_connections=32,
                     connect_timeout=10, read_timeout=60)
        return session.client(service, endpoint_url=self.endpoint_url, config=cfg)

    def account_id(self, session: Any = None) -> str:
        """The 12-digit account of the session's credentials (STS GetCallerIdentity). Raises :func:`translate`
        errors."""
        try:
            return str(self.client("sts", session).get_caller_identity()["Account"])
        except Exception as exc:
            raise translate(exc, action="sts:GetCallerIdentity") from exc


def _refusing_malformed(session: Any) -> Any:
    """``session`` with the check of :class:`MalformedResponseError` before botocore parses any answer of a client
    made from it."""
    session.events.register("before-parse", _refuse_malformed, unique_id="idemwatch-refuse-malformed")
    return session


def _refuse_malformed(operation_model: Any, response_dict: dict[str, Any], **_: Any) -> None:
    """botocore ``before-parse`` handler: a 2xx answer of a JSON-protocol operation whose body is not a JSON object
    (botocore would read unparseable text as ``{"message": body}`` and fail on a JSON array)."""
    service = operation_model.service_model
    protocol = getattr(service, "resolved_protocol", None) or service.protocol
    status = response_dict["status_code"]
    if protocol not in _JSON_PROTOCOLS or not 200 <= status < 300 or operation_model.has_streaming_output:
        return
    output = operation_model.output_shape
    if output is not None and "payload" in output.serialization:
        return  # rest-json operations whose body is one member (a blob or document), not a JSON object
    body = response_dict["body"]
    if not body:
        return  # an empty body is the documented answer of operations without output
    try:
        doc = json.loads(body)
    except ValueError:
        doc = None
    if not isinstance(doc, dict):
        raise MalformedResponseError(
            f"malformed AWS response to {service.service_id} {operation_model.name}: HTTP {status} with a body that "
            f"is not a JSON object ({len(body)} bytes); is the endpoint an AWS endpoint?")


def error_code(exc: BaseException) -> str | None:
    """The AWS error code of a botocore ``ClientError`` (``exc.response["Error"]["Code"]``), else None."""
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        code = response.get("Error", {}).get("Code")
        return str(code) if code else None
    return None


def is_throttling(exc: BaseException) -> bool:
    """True when ``exc`` carries one of :data:`THROTTLING_CODES`."""
    return error_code(exc) in THROTTLING_CODES


def translate(exc: BaseException, action: str, resource: str | None = None) -> AwsError:
    """Map an AWS SDK exception to a one-line :class:`AwsError` naming ``action`` (the IAM action, e.g.
    ``logs:StartQuery``) and ``resource``. An :class:`AwsError` is returned as it is."""
    import botocore.exceptions
    import botocore.parsers

    if isinstance(exc, AwsError):
        return exc
    what = f"{action} on {resource}" if resource else action
    if isinstance(exc, (botocore.exceptions.NoCredentialsError, botocore.exceptions.PartialCredentialsError)):
        return MissingCredentialsError(
            "no AWS credentials found: set AWS_PROFILE / --profile, AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, "
            "or run where an IAM role is available")
    if isinstance(exc, botocore.exceptions.EndpointConnectionError):
        return AwsError(f"cannot reach the AWS endpoint for {action}: {exc}")
    if isinstance(exc, botocore.parsers.ResponseParserError):
        return MalformedResponseError(f"malformed AWS response to {action}: {exc}")
    code = error_code(exc)
    message = str(getattr(exc, "response", {}).get("Error", {}).get("Message", "")) if code else str(exc)
    if code in ACCESS_DENIED_CODES:
        return AccessDeniedError(f"access denied: {what} ({code}); the IAM policy needs {action}")
    if code in THROTTLING_CODES:
        return ThrottledError(f"throttled: {what} kept failing with {code} after retries; try --max-concurrency 1 later")
    if code in _NOT_FOUND_CODES:
        kind = {"logs": "log group", "dynamodb": "DynamoDB table"}.get(action.split(":")[0], "resource")
        return NotFoundError(f"{kind} not found: {resource or message}")
    if code in _REJECTED_CODES:
        return RejectedError(f"{what} rejected ({code}): {message}")
    return AwsError(f"{what} failed: {code or type(exc).__name__}: {message}")
