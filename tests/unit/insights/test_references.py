"""query_references: the fields a query reads from events, its literals and its result columns, from the parse tree."""

from __future__ import annotations

import pytest

from collector.insights import QueryError, query_references


def test_fields_read_skip_names_an_earlier_command_defines():
    refs = query_references('filter a = "x" | fields b + 1 as c | stats count(*) as n by c, d | filter n > 2')
    assert refs.fields_read == ("a", "b", "d")  # c (fields alias) and n (stats alias) are the query's own
    assert refs.literals == ("x", 1, 2)
    assert refs.columns == ("c", "d", "n")


def test_parse_names_are_defined_and_its_source_is_read():
    refs = query_references('parse @message "user=* id=*" as user, id | filter user = "bob" and id > 3 | fields user')
    assert refs.fields_read == ("@message",)
    assert refs.columns == ("user",)


def test_each_field_once_in_order_of_first_use_nested_names_kept_whole():
    refs = query_references("filter ispresent(_aws.Timestamp) or x > 1 | fields x, _aws.Timestamp, record.status")
    assert refs.fields_read == ("_aws.Timestamp", "x", "record.status")
    assert refs.columns == ("x", "_aws.Timestamp", "record.status")


def test_a_field_read_before_it_is_redefined_counts():
    # the filter reads the event's own status before fields replaces it with an expression of the same name
    refs = query_references('filter status = "ok" | fields concat(status, "!") as status | filter status = "ok!"')
    assert refs.fields_read == ("status",)


def test_a_query_that_does_not_parse_raises():
    with pytest.raises(QueryError):
        query_references("stats count(* by x")
