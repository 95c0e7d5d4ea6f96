"""AWS Regions and partitions, read from the partition data botocore ships (``botocore/data/partitions.json``).

Templates are deployed in Regions their author never tried: a description built for ``us-east-1`` (9 characters)
grows by the difference once ``${AWS::Region}`` resolves to a longer code, and a hard-coded ``arn:aws:`` is wrong in
the China and GovCloud partitions. The exports size their text for :func:`longest_region` and name the partition
of a Region with :func:`partition_of`; the tests resolve every template for every code :func:`region_codes` lists.

Pseudo-regions of global endpoints (``aws-global``, ``aws-cn-global``, ...) are not Regions and are left out.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

DEFAULT_REGION = "us-east-1"
"""The Region templates are resolved in when none is given (the CloudFormation and Terraform defaults' own)."""


@lru_cache(maxsize=1)
def _partitions() -> list[dict[str, Any]]:
    import botocore.loaders  # botocore comes with boto3, a dependency of the alarms extra

    return list(botocore.loaders.create_loader().load_data("partitions")["partitions"])


def region_codes() -> tuple[tuple[str, str], ...]:
    """Every (partition id, Region code) of botocore's partition data, in file order, pseudo-regions left out."""
    return tuple((p["id"], code) for p in _partitions() for code in p.get("regions", {})
                 if not code.endswith("-global"))


def longest_region() -> str:
    """The longest Region code (the first in file order among equals): ``us-isof-south-1`` (15 characters) in the
    botocore this was written against. Text whose length depends on the Region is checked for this one."""
    return max((code for _, code in region_codes()), key=len)


def partition_of(region: str) -> str:
    """The partition id (``aws``, ``aws-cn``, ``aws-us-gov``, ...) of ``region``: the partition listing it, else the
    one whose ``regionRegex`` matches it, else ``aws``."""
    import re

    for p in _partitions():
        if region in p.get("regions", {}):
            return str(p["id"])
    for p in _partitions():
        if re.fullmatch(p.get("regionRegex", r"(?!)"), region):
            return str(p["id"])
    return "aws"
