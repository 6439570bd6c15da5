"""Image resolution order, on a stand-in for the Docker client (the decision logic only)."""

import threading

import pytest
from docker.errors import APIError, ImageNotFound

from kafka_chaos.harness import images
from kafka_chaos.harness.versions import KafkaVersion


class FakeImage:
    def __init__(self, recipe):
        self.labels = {images.RECIPE_LABEL: recipe}


class FakeImages:
    def __init__(self, present=(), pullable=(), recipe=None):
        self.present = set(present)
        self.pullable = set(pullable)
        self.pulled = []
        self.recipe = recipe or images.recipe_id()

    def get(self, tag):
        if tag not in self.present:
            raise ImageNotFound(tag)
        return FakeImage(self.recipe)

    def pull(self, repo, tag):
        self.pulled.append(f"{repo}:{tag}")
        if f"{repo}:{tag}" not in self.pullable:
            raise APIError("no registry")
        self.present.add(f"{repo}:{tag}")


class FakeClient:
    def __init__(self, **kw):
        self.images = FakeImages(**kw)


@pytest.fixture
def calls(monkeypatch, tmp_path):
    made = []
    monkeypatch.setattr(images, "BUILD_LOCK", tmp_path / "build.lock")  # not a real build's, held elsewhere
    monkeypatch.setattr(images, "build_image", lambda client, v, log: made.append(("build", str(v))) or "built")
    monkeypatch.setattr(images, "_derive_official", lambda client, v: made.append(("official", str(v))) or "derived")
    monkeypatch.delenv("KAFKA_CHAOS_OFFLINE", raising=False)
    return made


def test_local_image_is_used_as_it_is(calls):
    client = FakeClient(present={"kafka-chaos/kafka:3.9.1"})
    assert images.ensure_image(client, KafkaVersion.parse("3.9.1"), log=lambda m: None) == "kafka-chaos/kafka:3.9.1"
    assert calls == [] and client.images.pulled == []


def test_local_image_from_an_older_recipe_is_built_again(calls, monkeypatch):
    monkeypatch.setenv("KAFKA_CHAOS_OFFLINE", "1")
    client = FakeClient(present={"kafka-chaos/kafka:3.9.1"}, recipe="0123456789ab")
    said = []
    assert images.ensure_image(client, KafkaVersion.parse("3.9.1"), log=said.append) == "built"
    assert calls == [("build", "3.9.1")] and "older recipe" in said[0]


def test_official_image_is_pulled_when_a_registry_answers(calls):
    client = FakeClient(pullable={"apache/kafka:3.9.1"})
    assert images.ensure_image(client, KafkaVersion.parse("3.9.1"), log=lambda m: None) == "derived"
    assert calls == [("official", "3.9.1")]


def test_build_when_no_registry(calls):
    client = FakeClient()
    assert images.ensure_image(client, KafkaVersion.parse("3.9.1"), log=lambda m: None) == "built"
    assert client.images.pulled == ["apache/kafka:3.9.1"]
    assert calls == [("build", "3.9.1")]


def test_no_official_pull_before_3_7(calls):
    client = FakeClient(pullable={"apache/kafka:3.4.1"})
    assert images.ensure_image(client, KafkaVersion.parse("3.4.1"), log=lambda m: None) == "built"
    assert client.images.pulled == []


def test_offline_skips_pulls(calls, monkeypatch):
    monkeypatch.setenv("KAFKA_CHAOS_OFFLINE", "1")
    client = FakeClient(pullable={"apache/kafka:3.9.1"})
    assert images.ensure_image(client, KafkaVersion.parse("3.9.1"), log=lambda m: None) == "built"
    assert client.images.pulled == []


def test_a_failed_pull_is_told_in_the_users_terms_with_the_engines_error_in_the_debug_log(calls, caplog):
    client = FakeClient()
    client.images.pull = lambda repo, tag: (_ for _ in ()).throw(
        APIError("500 Server Error for http+docker://localhost/v1.50/images/create: Internal Server Err")
    )
    said = []
    with caplog.at_level("INFO", logger="kafka_chaos.harness.images"):
        images.ensure_image(client, KafkaVersion.parse("4.3.1"), log=said.append)
    assert said == [
        "no container registry has apache/kafka:4.3.1 for this machine; building the Kafka 4.3.1 image from "
        "Maven Central's jars instead (once, a minute or two)"
    ]
    assert "500 Server Error" in caplog.text and "Server Error" not in " ".join(said)


def test_a_build_waits_for_another_and_then_uses_its_image(calls, monkeypatch, tmp_path):
    """Two workers of a fresh machine's suite want the same image: the second waits for the
    first one's build, looks again, and builds nothing."""
    monkeypatch.setattr(images, "BUILD_LOCK", tmp_path / "build.lock")
    client = FakeClient()
    said, got = [], []
    waiting = threading.Event()
    with images._one_build_at_a_time(lambda m: None):
        other = threading.Thread(
            target=lambda: got.append(images.ensure_image(client, KafkaVersion.parse("3.4.1"), log=said.append))
        )
        monkeypatch.setattr(images.fcntl, "flock", _noting(images.fcntl.flock, waiting))
        other.start()
        assert waiting.wait(10)
        assert got == [] and said == ["another process is making an image; waiting for it"]
        client.images.present.add("kafka-chaos/kafka:3.4.1")  # the first build's image
    other.join(10)
    assert got == ["kafka-chaos/kafka:3.4.1"] and calls == []


def test_an_image_made_meanwhile_from_nothing_is_still_built_once(calls, monkeypatch, tmp_path):
    """The near miss: nobody else was building, so the first asker builds."""
    monkeypatch.setattr(images, "BUILD_LOCK", tmp_path / "build.lock")
    monkeypatch.setenv("KAFKA_CHAOS_OFFLINE", "1")
    said = []
    assert images.ensure_image(FakeClient(), KafkaVersion.parse("3.4.1"), log=said.append) == "built"
    assert calls == [("build", "3.4.1")] and said == []


def _noting(flock, event):
    """flock, setting `event` when a blocking take is about to wait."""

    def wrapped(fh, op):
        if op == images.fcntl.LOCK_EX:
            event.set()
        return flock(fh, op)

    return wrapped
