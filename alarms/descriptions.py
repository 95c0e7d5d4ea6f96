"""Alarm descriptions that fit: the API's 1,024 characters, in every Region the exports may be deployed in.

Shared by the catalogue's metric alarms, the composite alarms and the custom alarms, so that one rule decides what
is dropped when the text is too long.
"""

from __future__ import annotations

from alarms import constants as C
from alarms.links import console_base
from alarms.regions import longest_region


def fit_description(parts: list[str], links: tuple[tuple[str, str], ...], limit: int = C.MAX_DESCRIPTION,
                    region: str | None = None) -> str:
    """``parts`` joined by spaces, then ``Links: label url | ...``, within ``limit`` characters (AlarmDescription)
    in every Region.

    ``region``: the Region the console links were built for (the stack config's). The CloudFormation template and
    the Terraform module put the deployment's Region there instead (``${AWS::Region}``,
    ``data.aws_region.current``), twice per link, so the text is sized as if it were the longest Region code of
    botocore's partition data (:func:`alarms.regions.longest_region`): a stack deployed in ``ap-southeast-2`` or
    ``us-isof-south-1`` gets a description PutMetricAlarm accepts.

    ``parts`` are in order of importance (meaning, first check, ...); until the text fits, the parts after the
    second are left out from the end (the runbook link repeats them), then the Logs Insights query link (the
    longest; the console dashboard runs the function's queries), then the second part, then the log group link;
    the first part and the runbook link are always kept (the first part cut with "…" as a last resort). The alarm's
    own console link is not written: CloudWatch's notification carries it. Deterministic for the same input.
    """
    kept_parts = list(parts)
    kept_links = [x for x in links if x[0] != "alarm"]
    base = console_base(region) if region else ""
    growth = 2 * max(0, len(longest_region()) - len(region)) if region else 0

    def text() -> str:
        body = " ".join(kept_parts)
        if kept_links:
            body += " Links: " + " | ".join(f"{label} {url}" for label, url in kept_links)
        return body

    def size(t: str) -> int:  # the length once the links' Region is the longest one
        return len(t) + (t.count(base) * growth if base else 0)

    # what goes first when the text is too long: the later parts (the runbook repeats them) down to the first two
    # (meaning, first check), then the Logs Insights query link (the longest; the dashboard has the function's
    # queries), then the second part, then the log group link
    while size(text()) > limit and len(kept_parts) > 2:
        kept_parts.pop()
    if size(text()) > limit:
        kept_links = [x for x in kept_links if x[0] != "query"]
    if size(text()) > limit and len(kept_parts) > 1:
        kept_parts.pop()
    if size(text()) > limit:
        kept_links = [x for x in kept_links if x[0] != "logs"]
    out = text()
    cut = limit - 1
    while size(out) > limit:  # only the first part is left: cut it (a console URL in it still counts as growing)
        out = text()[:cut] + "\u2026"
        cut -= 1
    return out
