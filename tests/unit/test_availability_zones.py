"""Fn::GetAZs without an AWS endpoint: the zones AWS lists for the region; an endpoint that cannot answer gives the same."""
from __future__ import annotations

from cfnrun.app.stacks.endpoint_zones import EndpointZones
from cfnrun.stacks.template.availability_zones import listed_zones


def test_without_an_endpoint_a_region_gets_the_zones_aws_lists_for_it() -> None:
    assert EndpointZones(None).zones("us-east-1") == tuple(f"us-east-1{letter}" for letter in "abcdef")
    assert EndpointZones(None).zones("ap-northeast-1") == ("ap-northeast-1a", "ap-northeast-1c", "ap-northeast-1d")
    assert listed_zones("xx-nowhere-1") == ("xx-nowhere-1a", "xx-nowhere-1b", "xx-nowhere-1c")


def test_an_endpoint_that_does_not_answer_gives_the_listed_zones() -> None:
    assert EndpointZones("http://127.0.0.1:9").zones("eu-west-1") == ("eu-west-1a", "eu-west-1b", "eu-west-1c")
