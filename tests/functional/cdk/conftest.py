"""CDK apps synthesized once per test session (aws-cdk-lib runs on Node.js through jsii: importing it and one
synthesis take seconds, so every test of this folder shares the same two synthesized apps)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

if shutil.which("node") is None:  # .ci/run installs Node.js; a developer machine without it skips
    pytest.skip("Node.js is not on PATH (aws-cdk-lib runs on it)", allow_module_level=True)
# Node 20 is past its end of life for jsii (a banner on stderr); the synthesized output does not depend on it
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
os.environ.setdefault("JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION", "1")
pytest.importorskip("aws_cdk", reason="the cdk extra is not installed")


def _synthesized(tmp_path_factory: pytest.TempPathFactory, build: str) -> SimpleNamespace:
    from aws_cdk import assertions

    from tests.functional.cdk import apps

    app, stack, fleet, monitoring = getattr(apps, build)(tmp_path_factory.mktemp(build))
    template = assertions.Template.from_stack(stack)
    path = Path(app.synth().get_stack_by_name(stack.stack_name).template_full_path)
    return SimpleNamespace(app=app, stack=stack, fleet=fleet, monitoring=monitoring, template=template,
                           doc=template.to_json(), path=path)


@pytest.fixture(scope="session")
def explicit(tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    """The app whose monitored functions are named one by one (tests/functional/cdk/apps.py)."""
    return _synthesized(tmp_path_factory, "explicit_app")


@pytest.fixture(scope="session")
def discovered(tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    """The app of CDK constructs only, monitored by discovery."""
    return _synthesized(tmp_path_factory, "discovered_app")
