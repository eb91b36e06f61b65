"""What never reaches the history database: writeOnly values and credentials."""
from __future__ import annotations

import json
import re
from typing import Any, Dict, Iterable, List, Optional, Set

from cfnrun.events.masking import WriteOnlyMasking
from cfnrun.model.json_text import JsonWriter
from cfnrun.model.schema import ResourceSchema
from cfnrun.model.seen_call import SeenCall

CREDENTIAL_KEYS = ("callerCredentials", "providerCredentials", "credentials")
CREDENTIAL_FIELDS = ("accessKeyId", "secretAccessKey", "sessionToken")
# a configuration property holding a credential, by its name: ApiKey, ApplicationKey, ApiToken, Password, ClientSecret,
# Credentials (and all under it), AuthHeader (not AuthorName), PrivateKeyPem, ...
SENSITIVE_NAME = re.compile(r"key$|token|secret|passw|credential|auth(?!or)|private|cert", re.IGNORECASE)
CONFIGURATION_KEYS = ("typeConfiguration", "hookModel")  # where a payload carries the type's configuration (a hook's: hookModel)
CREDENTIALS_MASK = "*** credentials ***"
SECRET_MASK = "*** masked ***"
MIN_SCRUBBED_LENGTH = 4  # shorter values are masked where the schema places them, not searched for in text


class Masker(WriteOnlyMasking):
    """Masks writeOnly properties where the schema puts them, and every secret string wherever it shows up
    (a handler that logs its password, a callbackContext that carries it)."""

    def __init__(self, schema: ResourceSchema) -> None:
        super().__init__(schema)
        self._secrets: Set[str] = set()
        self._escaped: Optional[List[str]] = []  # the secrets as JSON text writes them, longest first; None: to be made again
        self._shown: Optional[List[str]] = []  # the secrets as they are, then as JSON text writes them, longest first; None: likewise

    def learn(self, models: Iterable[Optional[Dict[str, Any]]], credentials: Iterable[Any] = ()) -> None:
        """Remember the writeOnly values of ``models`` and the fields of ``credentials`` as secrets."""
        for model in models:
            if isinstance(model, dict):
                for container, key in self.schema.locate(model, self.schema.write_only_properties):
                    self._remember(container[key])
        for value in credentials:
            if isinstance(value, str):  # a hook's requestData carries them as a JSON string
                value = _json_object(value)
            if isinstance(value, dict):
                for name in CREDENTIAL_FIELDS:
                    self._remember(value.get(name))

    def learn_configuration(self, configuration: Any) -> None:
        """Remember the credentials in a type's configuration (SetTypeConfiguration's, ``--typeconfig``) as secrets: every
        value under a property named as one (``SENSITIVE_NAME``). Its schema cannot mark a property writeOnly, and the
        rest of it (a hook's EncryptionAlgorithm, say) is what a handler's messages name; the history keeps no value
        of it at all (``configuration``)."""
        if isinstance(configuration, dict):
            for key, value in configuration.items():
                if SENSITIVE_NAME.search(str(key)):
                    self._remember(value)
                else:
                    self.learn_configuration(value)
        elif isinstance(configuration, list):
            for item in configuration:
                self.learn_configuration(item)

    def configuration(self, configuration: Any) -> Any:
        """A type's configuration as a record keeps it: its keys, each value masked."""
        if isinstance(configuration, dict):
            return {key: self.configuration(value) for key, value in configuration.items()}
        if isinstance(configuration, list):
            return [self.configuration(item) for item in configuration]
        return configuration if configuration is None else SECRET_MASK

    def learn_values(self, secrets: Iterable[str]) -> None:
        """Remember ``secrets`` as they are (a stack's NoEcho parameter values, say), wherever the schema puts them or not."""
        for secret in secrets:
            self._remember(secret)

    def _remember(self, value: Any) -> None:
        if isinstance(value, (dict, list)):
            for item in value.values() if isinstance(value, dict) else value:
                self._remember(item)
        elif value is not None and not isinstance(value, bool) and len(str(value)) >= MIN_SCRUBBED_LENGTH:
            text = str(value)
            if text not in self._secrets:
                self._secrets.add(text)
                self._escaped = self._shown = None

    @property
    def has_secrets(self) -> bool:
        """Did ``learn`` find any secret: without one, no text needs masking."""
        return bool(self._secrets)

    def masked_pointers(self, *models: Optional[Dict[str, Any]]) -> List[str]:
        """The writeOnly properties that have a value in ``models``: masked, so a replay cannot send them."""
        return sorted({p for m in models if isinstance(m, dict) for p in self.schema.write_only_properties if self.schema.has_value(m, p)})

    def payload(self, payload: Any) -> Any:
        """A HandlerRequest or sam-tests event without credentials and with writeOnly values masked."""
        if not isinstance(payload, dict):
            return payload
        masked = dict(payload)
        for key in CREDENTIAL_KEYS:
            if masked.get(key) is not None:
                masked[key] = CREDENTIALS_MASK
        for key in CONFIGURATION_KEYS:
            if key in masked:
                masked[key] = self.configuration(masked[key])
        for section in ("requestData", "request"):
            inner = masked.get(section)
            if isinstance(inner, dict):
                inner = dict(inner)
                for key in CREDENTIAL_KEYS:
                    if inner.get(key) is not None:
                        inner[key] = CREDENTIALS_MASK
                for key in ("resourceProperties", "previousResourceProperties", "desiredResourceState", "previousResourceState"):
                    inner[key] = self.model(inner.get(key))
                if "typeConfiguration" in inner:
                    inner["typeConfiguration"] = self.configuration(inner["typeConfiguration"])
                masked[section] = inner
        return masked

    def dumps(self, value: Any) -> str:
        """JSON text of ``value`` with every known secret replaced by the mask, wherever it appears."""
        return self.masked_text(plain_json(value))

    def masked_text(self, text: str) -> str:
        """``text`` (JSON, as ``plain_json`` writes it) with every known secret replaced by the mask."""
        for escaped in self._escaped_secrets():
            text = text.replace(escaped, SECRET_MASK)
        return text

    def masked_output(self, text: str) -> str:
        """Live output (a handler's log lines, an error's message, a ``--json`` line) with every known secret replaced by
        the mask, written as it is or as JSON text writes it."""
        if self._shown is None:
            forms = {form for secret in self._secrets for form in (secret, json.dumps(secret)[1:-1])}
            self._shown = sorted(forms, key=len, reverse=True)
        for secret in self._shown:
            if secret in text:
                text = text.replace(secret, SECRET_MASK)
        return text

    def _escaped_secrets(self) -> List[str]:
        """The secrets as they appear in JSON text, longest first (a secret inside a longer one is masked with it):
        worked out once per secret learned, not once per text masked."""
        if self._escaped is None:
            self._escaped = [json.dumps(secret)[1:-1] for secret in sorted(self._secrets, key=len, reverse=True)]
        return self._escaped


def call_masker(schema: ResourceSchema, call: SeenCall) -> Masker:
    """The masker of a call serve answered: it knows the writeOnly values of the call's models and its credentials."""
    masker = Masker(schema)
    masker.learn(call.models, call.credentials)
    masker.learn_configuration(list(_configurations(call.payload)))
    return masker


def _configurations(payload: Any) -> Iterable[Any]:
    """The type configurations a handler's payload carries: its own (a hook's hookModel) and its request's."""
    if isinstance(payload, dict):
        yield from (payload.get(key) for key in CONFIGURATION_KEYS)
        for section in ("requestData", "request"):
            inner = payload.get(section)
            if isinstance(inner, dict):
                yield inner.get("typeConfiguration")


_PLAIN = JsonWriter(sort_keys=True, default=str)  # one encoder for every record


def plain_json(value: Any) -> str:
    """The JSON text of a record before masking: keys sorted, what JSON cannot say as its ``str``."""
    return _PLAIN.text(value)


def _json_object(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None
