"""``idemwatch init``: write the stack config from the IaC a team already has.

Reads a CloudFormation/SAM template, Terraform JSON or a CDK cloud assembly (``cdk.out``) through the audit's
resource model (:mod:`alarms.audit`: one resolver of function -> event source mapping -> queue -> DLQ -> table),
proposes the stack config (:mod:`.derive`), and writes it, or merges it into the file that exists, keeping every
edit (:mod:`.document`). What does not resolve is a commented TODO, never a guess::

    from alarms.stack_init import derive, merge_config, read_source
    source = read_source(Path("template.yaml"))
    text = merge_config(derive(source.inventory), None, "template.yaml").text
"""

from alarms.stack_init.derive import Derived, DerivedFunction, Todo, derive
from alarms.stack_init.document import Merge, merge_config
from alarms.stack_init.sources import Source, read_source

__all__ = ["Derived", "DerivedFunction", "Merge", "Source", "Todo", "derive", "merge_config", "read_source"]
