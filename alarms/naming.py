"""Names derived from alarm names: CloudFormation logical ids, Terraform resource names, file names.

Each is a pure function of the alarm name, so every export (and the tests) derives the same identifier.
"""

from __future__ import annotations

import re


def logical_id(alarm_name: str, suffix: str = "Alarm") -> str:
    """CloudFormation logical id: the alphanumeric runs of the name, each capitalised, then ``suffix`` (``Alarm``
    for metric and composite alarms, ``InsightRule`` for Contributor Insights rules; logical ids are alphanumeric:
    "Resources" in the CloudFormation template anatomy)."""
    parts = re.split(r"[^A-Za-z0-9]+", alarm_name)
    return "".join(p[:1].upper() + p[1:] for p in parts if p) + suffix


def tf_name(alarm_name: str) -> str:
    """Terraform resource name: snake_case of the name, starting with a letter (Terraform identifiers)."""
    s = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", alarm_name)
    s = re.sub(r"[^A-Za-z0-9_]+", "_", s).strip("_").lower()
    return s if s[:1].isalpha() else f"alarm_{s}"


def file_safe(name: str) -> str:
    """``name`` with every character other than ``A-Za-z0-9._-`` replaced by ``_`` (one path component;
    a name made only of dots becomes underscores, so it never means the folder or its parent)."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", name)
    return safe if safe.strip(".") else safe.replace(".", "_")


DASHBOARD_SUFFIX = "idemwatch"


def dashboard_name(name_prefix: str) -> str:
    """``<alarm name prefix>idemwatch`` with characters PutDashboard refuses replaced by ``-``
    (DashboardName: "alphanumerics, dash (-), and underscore (_)"); a templated prefix (``${...}``) is
    left as it is for the template engine."""
    name = f"{name_prefix}{DASHBOARD_SUFFIX}"
    return name if "${" in name_prefix else re.sub(r"[^A-Za-z0-9_-]", "-", name)
