"""boto3 sessions and clients for the collector, and translation of AWS errors into one-line messages."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import boto3
import botocore.exceptions
from botocore.config import Config

from collector.cloudwatch.exceptions import (
    AccessDeniedError,
    CloudWatchCollectorError,
    LogGroupNotFoundError,
    MissingCredentialsError,
    QueryFailedError,
    TableNotFoundError,
    ThrottledError,
)

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


@dataclass(frozen=True)
class AwsTarget:
    """Where and as whom to call AWS: standard boto3 credential chain, optionally a named profile, a Region,
    an endpoint URL (LocalStack/moto/test servers) and a role to assume (cross-account collection)."""

    profile: str | None = None
    region: str | None = None
    endpoint_url: str | None = None
    role_arn: str | None = None
    role_session_name: str = "idemwatch-collector"

    def session(self) -> boto3.session.Session:
        try:
            base = boto3.session.Session(profile_name=self.profile, region_name=self.region)
        except botocore.exceptions.ProfileNotFound as exc:
            raise MissingCredentialsError(f"AWS profile not found: {self.profile}") from exc
        if base.region_name is None:
            raise CloudWatchCollectorError("no AWS Region: pass --region or set AWS_REGION / a profile region")
        if not self.role_arn:
            return base
        sts = base.client("sts", endpoint_url=self.endpoint_url)
        try:
            creds = sts.assume_role(RoleArn=self.role_arn, RoleSessionName=self.role_session_name)["Credentials"]
        except Exception as exc:
            raise translate(exc, action="sts:AssumeRole", resource=self.role_arn) from exc
        return boto3.session.Session(
            aws_access_key_id=creds["AccessKeyId"], aws_secret_access_key=creds["SecretAccessKey"],
            aws_session_token=creds["SessionToken"], region_name=base.region_name,
        )

    def client(self, service: str, session: boto3.session.Session | None = None, retries: int = 3) -> Any:
        """A client for ``service``. ``retries`` = total attempts botocore makes itself (1 = none: the Logs
        Insights runner owns its throttling policy)."""
        session = session or self.session()
        cfg = Config(retries={"total_max_attempts": retries, "mode": "standard"}, max_pool_connections=32,
                     connect_timeout=10, read_timeout=60)
        return session.client(service, endpoint_url=self.endpoint_url, config=cfg)


def error_code(exc: BaseException) -> str | None:
    """The AWS error code of a botocore ClientError, else None."""
    if isinstance(exc, botocore.exceptions.ClientError):
        return exc.response.get("Error", {}).get("Code")
    return None


def is_throttling(exc: BaseException) -> bool:
    return error_code(exc) in THROTTLING_CODES


def translate(exc: BaseException, action: str, resource: str | None = None) -> CloudWatchCollectorError:
    """Map an AWS SDK exception to a one-line CloudWatchCollectorError naming the action (IAM name) and resource."""
    if isinstance(exc, CloudWatchCollectorError):
        return exc
    what = f"{action} on {resource}" if resource else action
    if isinstance(exc, (botocore.exceptions.NoCredentialsError, botocore.exceptions.PartialCredentialsError)):
        return MissingCredentialsError(
            "no AWS credentials found: set AWS_PROFILE / --profile, AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, "
            "or run where an IAM role is available"
        )
    if isinstance(exc, botocore.exceptions.EndpointConnectionError):
        return CloudWatchCollectorError(f"cannot reach the AWS endpoint for {action}: {exc}")
    code = error_code(exc)
    response = getattr(exc, "response", None) or {}
    message = response.get("Error", {}).get("Message", "") if code else str(exc)
    if code in ACCESS_DENIED_CODES:
        return AccessDeniedError(f"access denied: {what} ({code}); the IAM policy needs {action}")
    if code in THROTTLING_CODES:
        return ThrottledError(f"throttled: {what} kept failing with {code} after retries; try --concurrency 1 later")
    if code == "ResourceNotFoundException" and action.startswith("logs:"):
        return LogGroupNotFoundError(f"log group not found: {resource or message}")
    if code == "ResourceNotFoundException" and action.startswith("dynamodb:"):
        return TableNotFoundError(f"DynamoDB table not found: {resource or message}")
    if code in ("MalformedQueryException", "InvalidParameterException"):
        return QueryFailedError(f"{what} rejected ({code}): {message}")
    return CloudWatchCollectorError(f"{what} failed: {code or type(exc).__name__}: {message}")
