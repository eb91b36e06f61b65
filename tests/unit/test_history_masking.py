"""The history's masker: every secret it learned is masked in every text, each secret escaped once, not once per text."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, List

import pytest

from cfnrun.history.masking import SECRET_MASK, Masker, plain_json
from cfnrun.model.schema import ResourceSchema

NOTE_SCHEMA = Path(__file__).resolve().parents[2] / "samples" / "note" / "cfnrun-sample-note.json"


def test_each_secret_is_escaped_once_per_masker_and_one_learned_later_is_masked_too(monkeypatch: pytest.MonkeyPatch) -> None:
    masker = Masker(ResourceSchema.load(NOTE_SCHEMA))
    masker.learn([{"Title": "t", "AccessPassword": 'pass"word\\1'}], [{"accessKeyId": "AKIDMARKER0002", "secretAccessKey": "secret-key-1"}])
    escaped: List[Any] = []
    dumps = json.dumps

    def counted(value: Any, *args: Any, **kwargs: Any) -> str:
        escaped.append(value)
        return dumps(value, *args, **kwargs)

    monkeypatch.setattr(json, "dumps", counted)
    texts = [plain_json({"logs": f"{n}: pass\"word\\1 AKIDMARKER0002 secret-key-1 secret-key-12"}) for n in range(5)]
    masked = [masker.masked_text(text) for text in texts]
    assert sorted(escaped) == sorted(['pass"word\\1', "AKIDMARKER0002", "secret-key-1"])  # once each, for five texts
    assert json.loads(masked[4]) == {"logs": f"4: {SECRET_MASK} {SECRET_MASK} {SECRET_MASK} {SECRET_MASK}2"}

    masker.learn([], [{"sessionToken": "secret-key-12"}])  # longer than one it knows: masked whole, before the shorter one
    assert json.loads(masker.masked_text(texts[0])) == {"logs": f"0: {SECRET_MASK} {SECRET_MASK} {SECRET_MASK} {SECRET_MASK}"}
    assert len(escaped) == 7  # the four secrets escaped again, once


def test_a_masker_that_learned_nothing_leaves_text_as_it_is() -> None:
    masker = Masker(ResourceSchema.load(NOTE_SCHEMA))
    masker.learn([None, {"Title": "t"}], [None, "not json", {"accessKeyId": None}])
    text = plain_json({"logs": "pass", "n": 1})
    assert masker.masked_text(text) is text


@pytest.mark.parametrize(
    "value",
    [
        {"event": "invocation", "n": 1, "durationMs": 1.25, "logs": "é\u2028\x1b[31m\"quoted\"\n", "progressEvent": {"status": "SUCCESS"}},
        {"z": [1, -0.0, 1e-7, 1e300 * 10, float("nan"), None, True], "a": {"b": (1, 2), "a": []}},
        {"path": Path("/x"), "set": {1}},  # what JSON cannot say: its str
        "a string alone",
        [],
    ],
)
def test_a_records_json_text_is_what_the_json_module_writes_with_keys_sorted(value: Any) -> None:
    assert plain_json(value) == json.JSONEncoder(default=str, sort_keys=True).encode(value)
    assert plain_json(value) == json.dumps(value, default=str, sort_keys=True)


def test_keys_json_cannot_sort_are_refused_as_the_json_module_refuses_them() -> None:
    with pytest.raises(TypeError):
        plain_json({1: "a", "b": 2})


def test_live_output_is_masked_as_written_or_as_json_writes_it_and_only_where_there_are_secrets() -> None:
    from cfnrun.events.masking import LiveMask
    from cfnrun.history.masking import call_masker
    from cfnrun.model.seen_call import seen_call

    schema = ResourceSchema.load(NOTE_SCHEMA)
    payload = {
        "action": "CREATE",
        "requestData": {
            "resourceProperties": {"Title": "t", "AccessPassword": 'pa"ss-wörd'},
            "callerCredentials": {"accessKeyId": "AKIDCALLER01", "secretAccessKey": "caller-secret-1", "sessionToken": "tok-1234"},
            "providerCredentials": {"accessKeyId": "AKIDPROVIDER", "secretAccessKey": "provider-secret", "sessionToken": None},
        },
    }
    masker = call_masker(schema, seen_call(payload, True))
    assert masker.has_secrets
    said = 'pw=pa"ss-wörd keys caller-secret-1 provider-secret tok-1234 AKIDCALLER01 AKIDPROVIDER'
    m = SECRET_MASK
    assert masker.masked_output(said) == f"pw={m} keys {m} {m} {m} {m} {m}"
    as_json = json.dumps({"logs": said})  # ensure_ascii: the password as \" and \u00f6
    assert "pa\\\"ss-w\\u00f6rd" in as_json and json.loads(masker.masked_output(as_json))["logs"] == masker.masked_output(said)

    nothing = call_masker(schema, seen_call({"action": "CREATE", "requestData": {"resourceProperties": {"Title": "t"}}}, True))
    assert not nothing.has_secrets and nothing.masked_output("pw=abc") == "pw=abc"

    live = LiveMask()
    assert live("caller-secret-1") == "caller-secret-1"  # no operation's secrets yet: as it is
    live.use(masker.masked_output)
    assert live("caller-secret-1!") == f"{SECRET_MASK}!"


def test_a_type_configuration_is_kept_without_values_and_its_credentials_are_secrets() -> None:
    masker = Masker(ResourceSchema.load(NOTE_SCHEMA))
    configuration = {"Credentials": {"ApiKey": "k-123456", "Site": "eu1.example"}, "ClientSecret": "s-987654", "Algorithm": "aws:kms",
                     "Retries": 3, "Tags": ["a", None], "AuthorName": "Ada Lovelace", "AuthHeader": "Bearer abc123"}
    masker.learn_configuration(configuration)
    assert masker.configuration(configuration) == {
        "Credentials": {"ApiKey": SECRET_MASK, "Site": SECRET_MASK}, "ClientSecret": SECRET_MASK, "Algorithm": SECRET_MASK,
        "Retries": SECRET_MASK, "Tags": [SECRET_MASK, None], "AuthorName": SECRET_MASK, "AuthHeader": SECRET_MASK,
    }
    # under a credential's name everything is a secret; elsewhere a value stays shown where a handler's message names it
    shown = masker.masked_output("key k-123456 at eu1.example, secret s-987654, aws:kms, by Ada Lovelace with Bearer abc123")
    assert shown == f"key {SECRET_MASK} at {SECRET_MASK}, secret {SECRET_MASK}, aws:kms, by Ada Lovelace with {SECRET_MASK}"
    assert masker.payload({"requestData": {"typeConfiguration": {"ApiKey": "k-123456"}}, "hookModel": {"Algorithm": "aws:kms"}}) == {
        "requestData": {"typeConfiguration": {"ApiKey": SECRET_MASK}, "resourceProperties": None, "previousResourceProperties": None,
                        "desiredResourceState": None, "previousResourceState": None},
        "hookModel": {"Algorithm": SECRET_MASK},
    }
