import base64

from kafka_chaos.harness.cluster import new_cluster_id


def test_cluster_ids_are_kraft_uuids_that_never_look_like_options():
    ids = [new_cluster_id() for _ in range(5000)]  # 1 in 64 would start with '-' unless excluded
    assert all(len(i) == 22 and not i.startswith("-") for i in ids)
    assert all(len(base64.urlsafe_b64decode(i + "==")) == 16 for i in ids)
    assert len(set(ids)) == len(ids)
