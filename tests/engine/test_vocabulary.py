"""The query-understanding layer: framing, values, intent and its method prior, synonyms, the weak fields, the
project's additions, and the evidence each signal leaves in a row."""

from __future__ import annotations

import dataclasses
import json
import math

from qlab.collection.model import Collection
from qlab.engine import vocabulary
from qlab.engine.bm25f import DEFAULT_SETTINGS
from qlab.engine.builtin import BuiltinEngine
from qlab.engine.index import SearchIndex
from qlab.engine.text import split_words

from .helpers import param, tool

# the same words on every operation: only the method (and the vocabulary) can tell them apart
CRUD = tuple(
    tool(f"{verb}Contact", summary="contact", method=method, path="/contacts/{id}")
    for verb, method in (("delete", "DELETE"), ("get", "GET"), ("replace", "PUT"), ("add", "POST"))
)


def read(query: str) -> vocabulary.Reading:
    return vocabulary.default().read(split_words(query))


def test_framing_and_values_are_not_content() -> None:
    reading = read("I need to remove the lead with id 12345")
    assert reading.framing == ("i", "need", "to")
    assert reading.values == ("12345",)
    assert reading.content == ("remove", "the", "lead", "with", "id")
    assert (reading.intent, reading.verb) == ("delete", "remove")
    assert read("what should I get for dinner").content == ("for", "dinner")  # not GameTool's "get"


def test_the_first_intent_word_decides_and_a_question_asks_to_read() -> None:
    assert read("what deals are currently open").intent == "read"  # not "open" (create)
    assert read("open a new location").intent == "create"
    assert read("change the phone number").intent == "update"
    assert read("order 12").intent is None


def test_read_intent_puts_the_safe_method_first_and_a_delete_verb_the_delete() -> None:
    """Equal text: the method prior decides, and it shows in the breakdown as ``intent``."""
    index = SearchIndex(CRUD)
    top = index.search("show the contact", k=4).rows[0]
    assert top.tool_id == "getContact" and top.field_scores["intent"] > 0
    assert math.isclose(sum(top.field_scores.values()), top.score, rel_tol=1e-9)
    assert index.search("remove a contact", k=4).rows[0].tool_id == "deleteContact"
    assert index.search("add a contact", k=4).rows[0].tool_id == "addContact"


def test_ties_without_intent_put_safe_methods_first_and_delete_last() -> None:
    rows = SearchIndex(CRUD).search("contact", k=4).rows
    assert len({r.score for r in rows}) == 1
    assert [r.tool_id for r in rows] == ["getContact", "addContact", "replaceContact", "deleteContact"]


def test_a_word_the_collection_lacks_matches_through_its_synonyms_with_evidence() -> None:
    tools = (tool("p1", summary="Delete a pet", method="DELETE"), tool("getPet", summary="Show a pet"))
    row = SearchIndex(tools).search("remove pet", k=1).rows[0]
    assert row.tool_id == "p1"
    assert "remov~delet" in row.matched_terms
    assert row.field_scores["synonym"] > 0
    # the synonym counts less than the word itself
    direct = SearchIndex(tools).search("delete pet", k=1).rows[0]
    assert direct.score > row.score


def test_enum_values_and_examples_are_a_weak_field() -> None:
    status = param("status", location="query", enum=["available", "pending", "sold"])
    tools = (
        tool("findPetsByStatus", summary="Finds pets by status", params=(status,)),
        tool("findPetsByTags", summary="Finds pets by tags"),
    )
    row = SearchIndex(tools).search("show me all available dogs", k=2).rows[0]
    assert row.tool_id == "findPetsByStatus" and row.field_scores["values"] > 0


def test_a_project_adds_synonyms_verbs_and_framing() -> None:
    tools = (
        tool("listDroplets", summary="List droplets"),
        tool("archiveNote", summary="Archive a note", method="POST"),
        tool("getNote", summary="Get a note"),
    )
    extra = {
        "synonyms": [["droplet", "server"]],
        "verbs": {"archive": "delete"},
        "framing": ["pretty please"],
    }
    assert SearchIndex(tools).search("servers", k=1).rows == ()
    engine = BuiltinEngine(Collection(tools, vocabulary=extra))
    row = engine.search("servers", k=1).rows[0]
    assert row.tool_id == "listDroplets" and row.matched_terms == ("server~droplet",)
    explained = engine.explain("pretty please archive the note")
    assert explained.reading.framing == ("pretty", "please")
    assert explained.reading.intent == "delete"


def test_the_packaged_file_names_its_sources_and_only_known_intents() -> None:
    data = json.loads(vocabulary.DATA_FILE.read_text(encoding="utf-8"))
    assert data["sources"] and set(data["intents"]) == set(vocabulary.INTENTS)
    parsed = vocabulary.default()
    assert parsed.methods["delete"] == ("DELETE",) and parsed.verbs["remov"] == "delete"


def test_a_number_of_the_query_is_weak_evidence_only() -> None:
    """ "Where is delivery D-5001?": the operation whose example shows 5001 gets a little, never as much as a
    word would give."""
    tracking = param("deliveryId", example="D-5001")
    tools = (
        tool("trackDelivery", summary="Track a delivery", params=(tracking,)),
        tool("getDeliveryDetail", summary="Delivery detail"),
    )
    rows = SearchIndex(tools).search("where is delivery D-5001", k=2).rows
    assert rows[0].tool_id == "trackDelivery" and "5001" in rows[0].matched_terms
    weak = rows[0].field_scores["values"]
    as_word = dataclasses.replace(DEFAULT_SETTINGS, value_weight=1.0)
    strong = SearchIndex(tools, settings=as_word).search("where is delivery D-5001", k=1).rows[0]
    assert math.isclose(weak / strong.field_scores["values"], DEFAULT_SETTINGS.value_weight)


def test_the_scope_is_a_collection_or_one_item_when_the_words_say_one() -> None:
    assert read("show all the notes").scope == "collection"
    assert read("list conversation services").scope == "collection"
    assert read("show my notes").scope is None  # a plural noun alone says nothing: "get available resources"
    assert read("get the details of one conversation").scope == "item"
    assert read("get the note").scope is None  # a singular noun says nothing
    assert read("get one of all the notes").scope is None  # both: neither
    assert read("notes").scope is None  # no intent, no scope


def test_colloquial_verbs_say_their_intent() -> None:
    assert [
        read(q).intent for q in ("kill the stuck job", "cancel my subscription", "unsubscribe from it")
    ] == ["delete"] * 3
    assert [read(q).intent for q in ("close the issue", "pause the rollout", "archive a repository")] == [
        "update"
    ] * 3
    assert read("subscribe to a channel").intent == "create"


def test_a_phrasal_verb_says_its_own_intent_even_with_its_particle_a_word_or_two_later() -> None:
    for query, intent, verb in [
        ("get rid of a filter", "delete", "get rid"),  # "get" alone reads
        ("throw away a draft", "delete", "throw away"),
        ("tear down the staging namespace", "delete", "tear down"),
        ("take a video out of a playlist", "delete", "take out"),
        ("set up a load balancer", "create", "set up"),  # "set" alone updates
        ("turn it off", "update", "turn off"),
    ]:
        reading = read(query)
        assert (reading.intent, reading.verb) == (intent, verb), query
    assert read("show the setup of the server").intent == "read"  # an earlier verb still decides
    assert read("set the name to up").intent == "update"  # the particle too far away


def test_a_verb_in_its_s_form_is_a_noun_or_a_third_person_and_says_no_intent() -> None:
    assert read("request a refund").intent == "create"
    assert read("connect OPTIONS requests to proxy of Pod").intent is None  # not create
    assert read("recent updates of the repository").intent is None  # not update
    assert read("who holds the lease").intent == "read"  # the question word
    assert read("cancel the process").intent == "delete"  # -ss is no -s form


def test_words_of_cloud_requests() -> None:
    """Booting is starting, pausing suspends, growing resizes, a VM is an instance: "pause a VM" finds the
    suspend action of an instance, not its update."""
    assert read("boot the server").intent == "create"
    assert read("grow my disk").intent == read("shrink the group").intent == "update"
    tools = (
        tool("instances.update", summary="Updates an instance.", method="PUT", path="/instances/{instance}"),
        tool(
            "instances.suspend", summary="Suspends an instance.", method="POST", path="/instances/{i}/suspend"
        ),
        tool("instances.start", summary="Starts an instance.", method="POST", path="/instances/{i}/start"),
        tool("disks.resize", summary="Resizes a disk.", method="POST", path="/disks/{disk}/resize"),
        tool("disks.update", summary="Updates a disk.", method="PATCH", path="/disks/{disk}"),
    )
    index = SearchIndex(tools)
    assert index.search("pause a VM", k=1).rows[0].tool_id == "instances.suspend"
    assert index.search("boot my VM", k=1).rows[0].tool_id == "instances.start"
    assert index.search("grow my disk to 500 GB", k=1).rows[0].tool_id == "disks.resize"
