from tests.conftest import key_headers


def test_workspace_read_with_init_key(client, owner):
    r = client.get("/v1/workspace", headers=key_headers(owner.api_key))
    assert r.status_code == 200
    assert r.json()["id"] == owner.workspace_id
