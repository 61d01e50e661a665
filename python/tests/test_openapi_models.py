"""The Python SDK's records against the OpenAPI document the server serves: the same field names,
and every field the SDK types as always present is one the document requires, so the SDK, the
TypeScript types and the document (one set of schemas on the server) cannot drift apart."""

from __future__ import annotations

import dataclasses
import json
import unittest
import urllib.request
from typing import Any, Dict, List, Set, Tuple

import _server  # noqa: F401
from _server import ServerTestCase

from cairn import models

# Each record of the SDK and the component of the document it decodes.
RECORDS: List[Tuple[type, str]] = [
    (models.Artifact, "Artifact"),
    (models.ArtifactPage, "ArtifactList"),
    (models.Session, "Session"),
    (models.SessionPage, "SessionList"),
    (models.DownloadUrl, "DownloadUrl"),
    (models.Link, "Link"),
    (models.LinkPage, "LinkList"),
    (models.RevokeLinkResult, "RevokeLinkResult"),
    (models.DeleteResult, "DeleteResult"),
    (models.SealResult, "SealResult"),
    (models.PublishResult, "PublishResult"),
    (models.UnpublishResult, "UnpublishResult"),
    (models.WhoAmI, "WhoAmI"),
    (models.UploadTicket, "UploadTicket"),
    (models.GateInfo, "GateInfo"),
    (models.UnlockResult, "UnlockResult"),
    (models.ArchiveUrl, "ArchiveUrl"),
    (models.SessionLink, "SessionLink"),
    (models.SessionLinkPage, "SessionLinkList"),
]


# Records decoded inside another one, each checked by a test of its own below.
NESTED = {models.PageSummary, models.BatchDownloadUrl}

# Fields the SDK sets itself, never sent by the server: a delete retried after a lost answer that
# meets 410 artifact_already_deleted resolves as already_deleted (as the TypeScript SDK does).
SDK_ONLY = {"DeleteResult": {"already_deleted"}}


def flatten(schema: Dict[str, Any], components: Dict[str, Any]) -> Tuple[Set[str], Set[str]]:
    """(property names, required names) of a component, following $ref and allOf."""
    if "$ref" in schema:
        return flatten(components[schema["$ref"].rsplit("/", 1)[-1]], components)
    names: Set[str] = set(schema.get("properties", {}))
    required: Set[str] = set(schema.get("required", []))
    for part in schema.get("allOf", []):
        n, r = flatten(part, components)
        names |= n
        required |= r
    return names, required


def sdk_fields(cls: type) -> Dict[str, str]:
    return {f.name: str(f.type) for f in dataclasses.fields(cls) if f.name != "raw"}


class OpenApiModelsTest(ServerTestCase):
    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        with urllib.request.urlopen(f"{cls.server.base_url}/v1/openapi.json") as res:
            cls.components = json.load(res)["components"]["schemas"]

    def test_every_record_has_the_documents_fields(self) -> None:
        for cls, name in RECORDS:
            with self.subTest(record=cls.__name__, component=name):
                self.assertIn(name, sorted(self.components))
                names, required = flatten(self.components[name], self.components)
                fields = {n: t for n, t in sdk_fields(cls).items() if n not in SDK_ONLY.get(cls.__name__, set())}
                self.assertEqual(set(fields), names, f"{cls.__name__} fields vs {name} properties")
                always = {n for n, t in fields.items() if not t.startswith("Optional")}
                self.assertLessEqual(always - required, set(), f"{cls.__name__}: typed as always present, not required by {name}")

    def test_every_model_is_checked(self) -> None:
        """A record added to the SDK without a line in RECORDS (or a test of its own) fails here."""
        checked = {cls for cls, _ in RECORDS} | NESTED
        models_ = {
            cls
            for cls in vars(models).values()
            if isinstance(cls, type) and issubclass(cls, models._Record) and cls is not models._Record
        }
        self.assertEqual(sorted(c.__name__ for c in models_ - checked), [])

    def test_a_batch_item_has_the_fields_of_either_answer(self) -> None:
        items = self.components["BatchDownloadUrls"]["properties"]["download_urls"]["items"]
        branches = [flatten(b, self.components) for b in items.get("anyOf") or items.get("oneOf") or [items]]
        self.assertGreater(len(branches), 1, "a URL or an error")
        fields = sdk_fields(models.BatchDownloadUrl)
        self.assertEqual(set(fields), set().union(*(names for names, _ in branches)))
        always = {n for n, t in fields.items() if not t.startswith("Optional")}
        for _, required in branches:
            self.assertLessEqual(always - required, set(), "typed as always present, not required by every answer")

    def test_a_listed_link_is_a_link_without_its_artifact_id(self) -> None:
        # LinkPage.for_artifact fills the artifact_id in: the list of one artifact leaves it out.
        names, required = flatten(self.components["ListedLink"], self.components)
        fields = sdk_fields(models.Link)
        self.assertEqual(set(fields) - {"artifact_id"}, names)
        self.assertLessEqual({n for n, t in fields.items() if not t.startswith("Optional")} - {"artifact_id"}, required)

    def test_the_page_summary_inside_an_artifact(self) -> None:
        page = self.components["Artifact"]["properties"]["page"]
        options = page.get("anyOf") or page.get("oneOf") or [page]
        objects = [o for o in options if o.get("type") == "object" or "properties" in o or "$ref" in o]
        self.assertTrue(objects, "Artifact.page has an object form")
        names, _ = flatten(objects[0], self.components)
        self.assertEqual(set(sdk_fields(models.PageSummary)), names)


if __name__ == "__main__":
    unittest.main()
